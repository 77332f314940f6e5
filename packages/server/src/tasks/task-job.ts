import { workBudgetMs, type EngineJob, type EnginePool, type JobName, type JobResult, type WorkBudget } from '@mos/engines'
import { TERMINAL_TASK_STATUSES } from '@mos/sdk/contract'
import { isDiskFull } from '../storage/disk-full.ts'
import { FsStoreError } from '../storage/fs-store-error.ts'
import { storageFailureOf } from '../storage/storage-unavailable.ts'
import { FileNotFoundError, type FileStore } from '../storage/file-store.ts'
import type { TaskStore } from '../storage/task-store.ts'
import type { ProgressWriter } from './progress-writer.ts'
import type { RecordWriter } from './record-writer.ts'
import type { RunSignal } from './run-signal.ts'
import { retryStoreCall, type StoreRetryPolicy } from './store-retry.ts'
import type { TaskLog } from './task-log.ts'
import type { TaskState } from './task-state.ts'
import type { RunOutcome } from './task-transitions.ts'

/** What a task's engine job needs from the runner. */
export interface TaskJobContext {
  tasks: TaskStore
  files: FileStore
  pool: EnginePool
  maxAllocationBytes?: number | undefined
  workBudget?: WorkBudget | undefined
  timeoutMs?: number | undefined
  log?: TaskLog | undefined
  /** True while this process stops: results of interrupted jobs are not recorded. */
  stopping(): boolean
  /** How the run's reads and writes of its record, input and output are retried while storage is away. */
  storeRetry?: StoreRetryPolicy
}

/** The pieces of one run the job reports to and is stopped by. */
export interface TaskJobRun {
  task: TaskState
  outputKey: string
  writer: RecordWriter
  progress: ProgressWriter
  runSignal: RunSignal
}

/**
 * Runs the task's engine job and stores its result file: how the run ended, or undefined when
 * there is nothing to record (the task was handed back, or finished elsewhere meanwhile).
 */
export async function runTaskJob(context: TaskJobContext, run: TaskJobRun): Promise<RunOutcome | undefined> {
  const { files } = context
  const { outputKey, runSignal } = run
  const handedBack = () => context.stopping() || runSignal.handedBack()
  try {
    const result = await runOnPool(context, run)
    if (handedBack()) return undefined
    if (runSignal.cancelled()) return cancelled(files, outputKey)
    await run.writer.settled()
    // Another worker may have finished this task while we ran (at-least-once): never record twice.
    if (await storeCall(context, run.task, 'reading its record', () => finishedElsewhere(context.tasks, run.task.task_id))) return undefined
    if (runSignal.timedOut()) return { kind: 'timed-out', timeoutMs: context.timeoutMs ?? 0 }
    // The thread wrote the result into the file store itself: a refusal there is the store's, not the input's.
    if (!result.ok && result.outputWriteError) throw outputWriteFailure(outputKey, result.outputWriteError)
    // A result the thread had half written (disk full) would hold the space the record needs.
    if (!result.ok) await discardOutput(files, outputKey)
    // A full disk is the task's answer (it fails saying so); a store away is waited for.
    else if (result.bytes) await storeCall(context, run.task, 'writing its output', () => files.write(outputKey, result.bytes!), isDiskFull)
    return { kind: 'result', result, outputKey }
  } catch (error) {
    if (handedBack()) return undefined
    if (runSignal.cancelled()) return cancelled(files, outputKey)
    await discardOutput(files, outputKey)
    return { kind: 'error', error }
  }
}

/**
 * The job on the engine pool, with the task's budget, progress and log; its signal and progress end
 * with it, also when reading the input for it fails.
 */
async function runOnPool(context: TaskJobContext, { task, outputKey, progress, runSignal }: TaskJobRun): Promise<JobResult> {
  try {
    const budgetMs = context.workBudget ? workBudgetMs(task.input_size_bytes, context.workBudget) : undefined
    const job = await storeCall(
      context,
      task,
      'reading its input',
      () => engineJob(task, context.files, outputKey, context.maxAllocationBytes),
      (error) => error instanceof FileNotFoundError,
    )
    return await context.pool.run(job, {
      onProgress: progress.report,
      signal: runSignal.signal,
      onLog: (entry) => context.log?.engine(task, entry),
      ...(budgetMs !== undefined ? { budgetMs } : {}),
    })
  } finally {
    runSignal.clear()
    progress.stop()
  }
}

/**
 * One storage call of the run, retried while it fails (store-retry.ts) unless `isFinal` says its
 * error is the task's answer: the task's input is fine, and a Redis restart or an S3 blip during
 * the run must delay the task, never fail it with the store's error.
 */
function storeCall<T>(
  context: TaskJobContext,
  task: TaskState,
  step: string,
  operation: () => Promise<T>,
  isFinal?: (error: unknown) => boolean,
): Promise<T> {
  const policy: StoreRetryPolicy = {
    ...context.storeRetry,
    onRetry: (error, waitMs) => context.log?.storeRetry(task, step, (error as Error).message, waitMs),
  }
  // A store that refused the call (S3's 403, a read-only folder) refuses it again: only a store
  // away is waited for. A refusal was retried for the five minutes, the task \`processing\` meanwhile.
  const refused = (error: unknown) => storageFailureOf(error) === 'failed' || (isFinal?.(error) ?? false)
  return retryStoreCall(operation, policy, refused)
}

/** The store's error for a result the engine thread could not write where the file store keeps it. */
function outputWriteFailure(outputKey: string, { code, message }: { code: string; message: string }): FsStoreError {
  return new FsStoreError('write', outputKey, { cause: Object.assign(new Error(message), { code }) })
}

/** A cancelled run keeps no half-written result. */
async function cancelled(files: FileStore, outputKey: string): Promise<RunOutcome> {
  await discardOutput(files, outputKey)
  return { kind: 'cancelled' }
}

/** Removes what a run that recorded no result may have written of it (an absent file is no error). */
const discardOutput = (files: FileStore, outputKey: string) => files.remove(outputKey).catch(() => undefined)

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

/** True when the task's record is gone or already ended (another worker finished it, or it was deleted). */
export async function finishedElsewhere(tasks: TaskStore, taskId: string): Promise<boolean> {
  const latest = await tasks.get(taskId)
  return !latest || TERMINAL_TASK_STATUSES.includes(latest.status)
}
