import { workBudgetMs, type EngineJob, type EnginePool, type JobName, type WorkBudget } from '@mos/engines'
import { ERROR_TEXTS, TERMINAL_TASK_STATUSES } from '@mos/sdk/contract'
import type { FileStore } from '../storage/file-store.ts'
import { DISK_FULL_TEXT, isDiskFull } from '../storage/disk-full.ts'
import type { TaskStore } from '../storage/task-store.ts'
import type { TaskLog } from './task-log.ts'
import { now, outputFilename, sizeFigures, type TaskState } from './task-state.ts'

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

const WITH_SIZE_FIGURES = new Set(['compress', 'texture_optimize', 'texture_ktx2'])

/** Key of a task's files in the file store. */
export const taskFileKey = (taskId: string, name: 'input' | 'output') => `tasks/${taskId}/${name}`

/**
 * Runs tasks on the engine pool: pending → processing (with progress from the worker) → completed
 * or failed. Every record write of one run goes through one chain, so a late progress update can
 * never overwrite the final state.
 */
export function createTaskRunner(options: TaskRunnerOptions): TaskRunner {
  const { tasks, files, pool } = options
  const interval = options.progressIntervalMs ?? 250
  const recordRetryMs = options.recordRetryMs ?? 5 * 60_000
  let stopping = false

  /**
   * A state change that must reach the record (start, end): retried with doubling waits (0.25 s up
   * to 15 s) while it fails, e.g. until a full disk has room again.
   */
  async function putRecord(record: TaskState): Promise<void> {
    const giveUpAt = Date.now() + recordRetryMs
    for (let wait = 250; ; wait = Math.min(wait * 2, 15_000)) {
      try {
        return await tasks.put(record)
      } catch (error) {
        if (Date.now() + wait > giveUpAt || stopping) throw error
        console.error(`[mos] task ${record.task_id}: writing its record failed (${isDiskFull(error) ? DISK_FULL_TEXT : (error as Error).message}); retrying in ${wait} ms`)
        await new Promise((resolve) => setTimeout(resolve, wait))
      }
    }
  }

  async function run(taskId: string, runOptions: RunOptions = {}): Promise<void> {
    const stored = await tasks.get(taskId)
    if (!stored || TERMINAL_TASK_STATUSES.includes(stored.status)) return
    if (options.maxAttempts && stored.job.attempts >= options.maxAttempts) {
      // Every earlier start ended without a result: its process died (crash, out of memory, kill).
      const gaveUp = ended(failed(stored, ERROR_TEXTS.internal(`task stopped ${stored.job.attempts} times without finishing (its worker process ended each time)`)))
      await putRecord(gaveUp)
      options.log?.settled(gaveUp)
      options.onSettled?.(gaveUp)
      return
    }
    let task: TaskState = {
      ...stored,
      status: 'processing',
      progress: 0,
      started_at: now(),
      job: {
        ...stored.job,
        attempts: stored.job.attempts + 1,
        ...(!stored.job.requestId && runOptions.requestId ? { requestId: runOptions.requestId } : {}),
      },
    }
    await putRecord(task)
    options.log?.running(task)
    const runStart = performance.now()
    let chain = Promise.resolve()
    // Progress is best effort (a failed write is dropped, the next one carries newer progress); the
    // final state is retried. The chain never stays rejected, so one failed write blocks no later one.
    const save = (next: TaskState, best = false) => {
      task = next
      const write = chain.then(() => (best ? tasks.put(next) : putRecord(next)))
      chain = write.catch(() => undefined)
      return write
    }

    // At most one progress write per interval, and the last value of a burst is written when the
    // interval ends rather than dropped (a slow final stage would otherwise show stale progress).
    // The interval counts from the start: a task shorter than it writes no progress at all, only its
    // start and end.
    let lastWrite = Date.now()
    let latest = 0
    let trailing: ReturnType<typeof setTimeout> | undefined
    const writeProgress = () => {
      trailing = undefined
      if (task.status !== 'processing' || latest <= (task.progress ?? 0)) return
      lastWrite = Date.now()
      save({ ...task, progress: latest }, true).catch(() => undefined)
    }
    const onProgress = (progress: number) => {
      latest = Math.max(latest, Math.min(99, Math.round(progress)))
      if (trailing) return
      const wait = interval - (Date.now() - lastWrite)
      if (wait <= 0) writeProgress()
      else trailing = setTimeout(writeProgress, wait)
    }
    const stopProgress = () => clearTimeout(trailing)

    const timeout = new AbortController()
    const timer = options.timeoutMs ? setTimeout(() => timeout.abort(), options.timeoutMs) : undefined
    const signal = runOptions.signal ? AbortSignal.any([runOptions.signal, timeout.signal]) : timeout.signal
    const handedBack = () => stopping || runOptions.signal?.aborted === true
    // Another worker may have finished this task while we ran (at-least-once): never record twice.
    const finishedElsewhere = async () => {
      const latest = await tasks.get(taskId)
      return !latest || TERMINAL_TASK_STATUSES.includes(latest.status)
    }

    try {
      const outputKey = taskFileKey(taskId, 'output')
      const inputKey = task.job.inputKey
      const localOutput = files.localPath?.(outputKey)
      const job: EngineJob = {
        name: task.type as JobName,
        input: files.localPath ? { path: files.localPath(inputKey) } : { bytes: await files.readBytes(inputKey) },
        format: task.job.format,
        filename: task.input_filename,
        options: { ...task.job.options, ...(options.maxAllocationBytes ? { maxAllocationBytes: options.maxAllocationBytes } : {}) },
        ...(localOutput ? { outputPath: localOutput } : {}),
      }
      const budgetMs = options.workBudget ? workBudgetMs(task.input_size_bytes, options.workBudget) : undefined
      const result = await pool.run(job, {
        onProgress,
        signal,
        onLog: (entry) => options.log?.engine(task, entry),
        ...(budgetMs !== undefined ? { budgetMs } : {}),
      })
      clearTimeout(timer)
      stopProgress()
      if (handedBack()) return
      await chain
      if (await finishedElsewhere()) return
      if (timeout.signal.aborted) {
        await save(ended(failed(task, ERROR_TEXTS.taskTimeout(Math.round(options.timeoutMs! / 1000)))))
      } else if (!result.ok) {
        // The engine thread writes the result itself (fs store): its failure comes back as text.
        const message = /\bENOSPC\b|\bEDQUOT\b|no space left on device/i.test(result.message) ? ERROR_TEXTS.internal(DISK_FULL_TEXT) : result.message
        // A result the thread had half written (disk full) would hold the space the record needs.
        await files.remove(outputKey).catch(() => undefined)
        await save(ended(failed(task, message)))
      } else {
        if (result.bytes) await files.write(outputKey, result.bytes)
        const { result: diagnosis, ...details } = result.details ?? {}
        await save(ended({
          ...task,
          status: 'completed',
          progress: 100,
          completed_at: now(),
          output: {
            filename: outputFilename(task.input_filename, task.type, result.extension, task.job),
            size_bytes: result.size,
            ...(WITH_SIZE_FIGURES.has(task.type) ? sizeFigures(task.input_size_bytes, result.size) : {}),
          },
          ...(diagnosis !== undefined ? { result: diagnosis } : {}),
          ...(Object.keys(details).length > 0 ? { details } : {}),
          job: { ...task.job, outputKey },
        }))
      }
    } catch (error) {
      clearTimeout(timer)
      stopProgress()
      if (handedBack()) return
      // A full disk (the result write) is named as the service's state, without our paths.
      const reason = isDiskFull(error) ? DISK_FULL_TEXT : error instanceof Error ? error.message : String(error)
      await files.remove(taskFileKey(taskId, 'output')).catch(() => undefined)
      await save(ended(failed(task, ERROR_TEXTS.internal(reason))))
    }
    await chain
    options.log?.settled(task, performance.now() - runStart)
    options.onSettled?.(task)
  }

  /** Marks an ended task with the time the retention sweep removes it. */
  function ended(task: TaskState): TaskState {
    if (!options.retentionMs) return task
    return { ...task, expires_at: new Date(Date.now() + options.retentionMs).toISOString() }
  }

  return {
    run,
    stop() {
      stopping = true
    },
  }
}

function failed(task: TaskState, message: string): TaskState {
  const { progress: _dropped, ...rest } = task
  return { ...rest, status: 'failed', error: message, failed_at: now() }
}
