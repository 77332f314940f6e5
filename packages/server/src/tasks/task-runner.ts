import { workBudgetMs, type EngineJob, type EnginePool, type JobName, type WorkBudget } from '@mos/engines'
import { TERMINAL_TASK_STATUSES } from '@mos/sdk/contract'
import type { FileStore } from '../storage/file-store.ts'
import type { TaskStore } from '../storage/task-store.ts'
import { createProgressWriter, type ProgressWriter } from './progress-writer.ts'
import { createRecordWriter, type RecordWriter } from './record-writer.ts'
import { createRunSignal, type RunSignal } from './run-signal.ts'
import type { TaskCancels } from './task-cancels.ts'
import type { TaskLog } from './task-log.ts'
import type { TaskState } from './task-state.ts'
import { settleTask, startTask, type RunOutcome } from './task-transitions.ts'

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
   * How long a failing record write (disk full, storage away) is retried, with backoff, before the
   * run gives up; the record then keeps its last stored state and the task runs again on recovery.
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

/**
 * Runs tasks on the engine pool: pending → processing (with progress from the worker) → completed
 * or failed. The pieces are their own modules: the record writer (one ordered chain per run, the
 * final state retried), the progress writer (throttled), the run signal (time-out and hand-back)
 * and the pure transitions from one record to the next; this function wires them around the job.
 */
export function createTaskRunner(options: TaskRunnerOptions): TaskRunner {
  const { tasks, files, pool } = options
  let stopping = false
  const writerOptions = {
    tasks,
    stopping: () => stopping,
    onRetry: (record: TaskState, reason: string, waitMs: number) => options.log?.recordRetry(record, reason, waitMs),
    ...(options.recordRetryMs !== undefined ? { retryMs: options.recordRetryMs } : {}),
  }
  const transition = () => ({ at: new Date(), ...(options.retentionMs ? { retentionMs: options.retentionMs } : {}) })

  /** Stores the final record (after every write queued before it: one chain), then tells the log and the listeners. */
  async function finish(writer: RecordWriter, task: TaskState, runMs?: number): Promise<void> {
    await writer.put(task)
    options.log?.settled(task, runMs)
    options.onSettled?.(task)
  }

  /**
   * Runs the job and stores its result file: how the run ended, or undefined when there is nothing
   * to record (the task was handed back, or finished elsewhere meanwhile).
   */
  async function runJob(
    task: TaskState,
    writer: RecordWriter,
    progress: ProgressWriter,
    runSignal: RunSignal,
  ): Promise<RunOutcome | undefined> {
    const outputKey = taskFileKey(task.task_id, 'output')
    const handedBack = () => stopping || runSignal.handedBack()
    try {
      const budgetMs = options.workBudget ? workBudgetMs(task.input_size_bytes, options.workBudget) : undefined
      const job = await engineJob(task, files, outputKey, options.maxAllocationBytes)
      const result = await pool
        .run(job, {
          onProgress: progress.report,
          signal: runSignal.signal,
          onLog: (entry) => options.log?.engine(task, entry),
          ...(budgetMs !== undefined ? { budgetMs } : {}),
        })
        .finally(() => {
          runSignal.clear()
          progress.stop()
        })
      if (handedBack()) return undefined
      if (runSignal.cancelled()) return cancelled(outputKey)
      await writer.settled()
      // Another worker may have finished this task while we ran (at-least-once): never record twice.
      if (await finishedElsewhere(tasks, task.task_id)) return undefined
      if (runSignal.timedOut()) return { kind: 'timed-out', timeoutMs: options.timeoutMs ?? 0 }
      // A result the thread had half written (disk full) would hold the space the record needs.
      if (!result.ok) await files.remove(outputKey).catch(() => undefined)
      else if (result.bytes) await files.write(outputKey, result.bytes)
      return { kind: 'result', result, outputKey }
    } catch (error) {
      runSignal.clear()
      progress.stop()
      if (handedBack()) return undefined
      if (runSignal.cancelled()) return cancelled(outputKey)
      await files.remove(outputKey).catch(() => undefined)
      return { kind: 'error', error }
    }
  }

  /** A cancelled run keeps no half-written result. */
  async function cancelled(outputKey: string): Promise<RunOutcome> {
    await files.remove(outputKey).catch(() => undefined)
    return { kind: 'cancelled' }
  }

  async function run(taskId: string, runOptions: RunOptions = {}): Promise<void> {
    // Watching before the record is read: a cancel that comes after the read reaches this run.
    const cancel = await options.cancels?.watch(taskId)
    try {
      await runWatched(taskId, runOptions, cancel?.signal)
    } finally {
      cancel?.release()
    }
  }

  async function runWatched(taskId: string, runOptions: RunOptions, cancel: AbortSignal | undefined): Promise<void> {
    const stored = await tasks.get(taskId)
    if (!stored || TERMINAL_TASK_STATUSES.includes(stored.status)) return
    const writer = createRecordWriter(writerOptions)
    if (options.maxAttempts && stored.job.attempts >= options.maxAttempts)
      return finish(writer, settleTask(stored, { kind: 'gave-up' }, transition()))

    let task = startTask(stored, new Date(), runOptions.requestId)
    await writer.put(task)
    options.log?.running(task)
    const runStart = performance.now()
    const progress = createProgressWriter({
      ...(options.progressIntervalMs !== undefined ? { intervalMs: options.progressIntervalMs } : {}),
      write: (value) => {
        if (task.status !== 'processing' || value <= (task.progress ?? 0)) return false
        task = { ...task, progress: value }
        writer.offer(task).catch(() => undefined)
        return true
      },
    })
    const runSignal = createRunSignal({
      ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
      ...(runOptions.signal ? { handBack: runOptions.signal } : {}),
      ...(cancel ? { cancel } : {}),
    })
    const outcome = await runJob(task, writer, progress, runSignal)
    if (!outcome) return
    // The cancel wrote the record already; it is written again only where a progress write of
    // this run landed after it, and never for a task deleted meanwhile.
    if (outcome.kind === 'cancelled' && (await writer.settled().then(() => finishedElsewhere(tasks, taskId)))) return
    task = settleTask(task, outcome, transition())
    await finish(writer, task, performance.now() - runStart)
  }

  return {
    run,
    stop() {
      stopping = true
    },
  }
}

/** The engine job of a task, reading its input from the local path where the store has one. */
async function engineJob(task: TaskState, files: FileStore, outputKey: string, maxAllocationBytes?: number): Promise<EngineJob> {
  const inputKey = task.job.inputKey
  const localOutput = files.localPath?.(outputKey)
  return {
    name: task.type as JobName,
    input: files.localPath ? { path: files.localPath(inputKey) } : { bytes: await files.readBytes(inputKey) },
    format: task.job.format,
    filename: task.input_filename,
    options: { ...task.job.options, ...(maxAllocationBytes ? { maxAllocationBytes } : {}) },
    ...(localOutput ? { outputPath: localOutput } : {}),
  }
}

async function finishedElsewhere(tasks: TaskStore, taskId: string): Promise<boolean> {
  const latest = await tasks.get(taskId)
  return !latest || TERMINAL_TASK_STATUSES.includes(latest.status)
}
