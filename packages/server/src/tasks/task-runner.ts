import type { EnginePool, WorkBudget } from '@mos/engines'
import { TERMINAL_TASK_STATUSES } from '@mos/sdk/contract'
import type { FileStore } from '../storage/file-store.ts'
import type { TaskStore } from '../storage/task-store.ts'
import { createProgressWriter, type ProgressWriter } from './progress-writer.ts'
import { createRecordWriter, type RecordWriter, type RecordWriterOptions } from './record-writer.ts'
import { createRunSignal } from './run-signal.ts'
import type { TaskCancels } from './task-cancels.ts'
import { finishedElsewhere, runTaskJob, type TaskJobContext } from './task-job.ts'
import type { TaskLog } from './task-log.ts'
import type { TaskState } from './task-state.ts'
import { settleTask, startTask, type TransitionOptions } from './task-transitions.ts'

export interface TaskRunnerOptions {
  tasks: TaskStore
  files: FileStore
  pool: EnginePool
  /** Least time between two progress writes to the record. */
  progressIntervalMs?: number
  /** Reader bound passed to every job (bytes). */
  maxAllocationBytes?: number
  /** Called when a task reaches a terminal state (metrics, batches). */
  onSettled?: (task: TaskState) => void
  /** A run longer than this fails with the timeout text; its engine thread is stopped. */
  timeoutMs?: number
  /** How long a job may hold its engine thread, from its input size; past it the job fails with the budget text. */
  workBudget?: WorkBudget
  /** How long an ended task is kept: sets `expires_at` on completed and failed records. */
  retentionMs?: number
  /** Starts of one task before it is failed (a task whose worker keeps dying must not go round forever). */
  maxAttempts?: number
  /** One line per transition and the engine threads' lines, with the task's request id. */
  log?: TaskLog
  /**
   * How long a failing record write (disk full, storage away), or a failing read or write of the
   * run's record, input or output while storage is away, is retried, with backoff, before the run
   * gives up; the record then keeps its last stored state and the task runs again on recovery.
   */
  recordRetryMs?: number
  /** Where a client's cancel reaches the run (Mos extension); none: runs cannot be cancelled. */
  cancels?: TaskCancels
}

export interface RunOptions {
  /** Aborted when this process hands the task back (stopping without drain): nothing is recorded. */
  signal?: AbortSignal
  /** The upload's request id from the queue (the record's own wins). */
  requestId?: string
}

export interface TaskRunner {
  /** Runs one task to completed or failed; safe to call again for the same task (idempotent result). */
  run(taskId: string, options?: RunOptions): Promise<void>
  /** While stopping, results of interrupted jobs are not recorded: the task is picked up again on start. */
  stop(): void
}

/** Key of a task's files in the file store. */
export const taskFileKey = (taskId: string, name: 'input' | 'output') => `tasks/${taskId}/${name}`

/** The runner's options with what every run shares: the stop flag, the record writers' options, the transition's time. */
interface RunnerContext extends TaskRunnerOptions, TaskJobContext {
  writerOptions: RecordWriterOptions
  transition(): TransitionOptions
}

/**
 * Runs tasks on the engine pool: pending → processing (with progress from the worker) → completed
 * or failed. The pieces are their own modules: the record writer (one ordered chain per run, the
 * final state retried), the progress writer (throttled), the run signal (time-out and hand-back),
 * the task's engine job (task-job.ts) and the pure transitions from one record to the next; this
 * module wires them around the run.
 */
export function createTaskRunner(options: TaskRunnerOptions): TaskRunner {
  let stopping = false
  const context: RunnerContext = {
    ...options,
    stopping: () => stopping,
    writerOptions: {
      tasks: options.tasks,
      stopping: () => stopping,
      onRetry: (record, reason, waitMs) => options.log?.storeRetry(record, 'writing its record', reason, waitMs),
      ...(options.recordRetryMs !== undefined ? { retryMs: options.recordRetryMs } : {}),
    },
    storeRetry: {
      stopping: () => stopping,
      ...(options.recordRetryMs !== undefined ? { retryMs: options.recordRetryMs } : {}),
    },
    transition: () => ({ at: new Date(), ...(options.retentionMs ? { retentionMs: options.retentionMs } : {}) }),
  }
  return {
    async run(taskId, runOptions = {}) {
      // Watching before the record is read: a cancel that comes after the read reaches this run.
      const cancel = await options.cancels?.watch(taskId)
      try {
        await runWatched(context, taskId, runOptions, cancel?.signal)
      } finally {
        cancel?.release()
      }
    },
    stop() {
      stopping = true
    },
  }
}

async function runWatched(context: RunnerContext, taskId: string, runOptions: RunOptions, cancel: AbortSignal | undefined): Promise<void> {
  const stored = await context.tasks.get(taskId)
  if (!stored || TERMINAL_TASK_STATUSES.includes(stored.status)) return
  const writer = createRecordWriter(context.writerOptions)
  if (context.maxAttempts && stored.job.attempts >= context.maxAttempts)
    return finish(context, writer, settleTask(stored, { kind: 'gave-up' }, context.transition()))

  const current = { task: startTask(stored, new Date(), runOptions.requestId) }
  await writer.put(current.task)
  context.log?.running(current.task)
  const runStart = performance.now()
  const runSignal = createRunSignal({
    ...(context.timeoutMs ? { timeoutMs: context.timeoutMs } : {}),
    ...(runOptions.signal ? { handBack: runOptions.signal } : {}),
    ...(cancel ? { cancel } : {}),
  })
  const outputKey = taskFileKey(taskId, 'output')
  const progress = writeProgress(context, writer, current)
  const outcome = await runTaskJob(context, { task: current.task, outputKey, writer, progress, runSignal })
  if (!outcome) return
  // The cancel wrote the record already; it is written again only where a progress write of
  // this run landed after it, and never for a task deleted meanwhile.
  if (outcome.kind === 'cancelled' && (await writer.settled().then(() => finishedElsewhere(context.tasks, taskId)))) return
  const cause = outcome.kind === 'error' ? outcome.error : undefined
  await finish(context, writer, settleTask(current.task, outcome, context.transition()), performance.now() - runStart, cause)
}

/** The worker's progress, written to the record (throttled, only forward) while the task is processing. */
function writeProgress(context: RunnerContext, writer: RecordWriter, current: { task: TaskState }): ProgressWriter {
  return createProgressWriter({
    ...(context.progressIntervalMs !== undefined ? { intervalMs: context.progressIntervalMs } : {}),
    write: (value) => {
      if (current.task.status !== 'processing' || value <= (current.task.progress ?? 0)) return false
      current.task = { ...current.task, progress: value }
      writer.offer(current.task).catch(() => undefined)
      return true
    },
  })
}

/** Stores the final record (after every write queued before it: one chain), then tells the log and the listeners. */
async function finish(context: RunnerContext, writer: RecordWriter, task: TaskState, runMs?: number, cause?: unknown): Promise<void> {
  await writer.put(task)
  context.log?.settled(task, runMs, cause)
  context.onSettled?.(task)
}
