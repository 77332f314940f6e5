import type { JobResult } from '@mos/engines'
import { CANCELLED_ERROR, ERROR_TEXTS } from '@mos/sdk/contract'
import { DISK_FULL_TEXT, isDiskFull } from '../storage/disk-full.ts'
import { outputFilename, sizeFigures, type TaskState } from './task-state.ts'
import { errorText } from '../error-text.ts'
import { STORAGE_FAILED_TEXT, STORAGE_UNAVAILABLE_TEXT, storageFailureOf } from '../storage/storage-unavailable.ts'

/**
 * The task runner's state changes as pure functions of plain values: no store, no pool, no clock
 * read (the time comes in as `at`), so each is tested on plain records.
 */

/** How one run ended, as the runner saw it. */
export type RunOutcome =
  /** The job came back from the pool (a failure is data too). */
  | { kind: 'result'; result: JobResult; outputKey: string }
  /** The run outlasted the task time-out. */
  | { kind: 'timed-out'; timeoutMs: number }
  /** Something around the job threw (reading the input, writing the result). */
  | { kind: 'error'; error: unknown }
  /** Every earlier start ended without a result: its process died (crash, out of memory, kill). */
  | { kind: 'gave-up' }
  /** A client cancelled the task (Mos extension). */
  | { kind: 'cancelled' }

export interface TransitionOptions {
  /** When the change happens. */
  at: Date
  /** How long an ended task is kept: sets `expires_at` on completed and failed records. */
  retentionMs?: number
}

/** Types whose output carries its size relative to the input (2.2). */
const WITH_SIZE_FIGURES = new Set(['compress', 'texture_optimize', 'texture_ktx2'])

/** A stored task taken up by a worker: processing from 0, one more attempt, the upload's request id if it has none. */
export function startTask(stored: TaskState, at: Date, requestId?: string): TaskState {
  return {
    ...stored,
    status: 'processing',
    progress: 0,
    started_at: at.toISOString(),
    job: {
      ...stored.job,
      attempts: stored.job.attempts + 1,
      ...(!stored.job.requestId && requestId ? { requestId } : {}),
    },
  }
}

/** The record a run ends with: completed with its output, or failed with the contract's text. */
export function settleTask(task: TaskState, outcome: RunOutcome, options: TransitionOptions): TaskState {
  switch (outcome.kind) {
    case 'gave-up':
      return failed(
        task,
        ERROR_TEXTS.internal(`task stopped ${task.job.attempts} times without finishing (its worker process ended each time)`),
        options,
      )
    case 'cancelled':
      return failed(task, CANCELLED_ERROR, options)
    case 'timed-out':
      return failed(task, ERROR_TEXTS.taskTimeout(Math.round(outcome.timeoutMs / 1000)), options)
    case 'error':
      return failed(task, ERROR_TEXTS.internal(aroundJobText(outcome.error)), options)
    case 'result':
      return outcome.result.ok ? completed(task, outcome.result, outcome.outputKey, options) : failed(task, outcome.result.message, options)
  }
}

function completed(task: TaskState, result: Extract<JobResult, { ok: true }>, outputKey: string, options: TransitionOptions): TaskState {
  const { result: diagnosis, ...details } = result.details ?? {}
  return ended(
    {
      ...task,
      status: 'completed',
      progress: 100,
      completed_at: options.at.toISOString(),
      output: {
        filename: outputFilename(task.input_filename, task.type, result.extension, task.job),
        size_bytes: result.size,
        ...(WITH_SIZE_FIGURES.has(task.type) ? sizeFigures(task.input_size_bytes, result.size) : {}),
      },
      ...(diagnosis !== undefined ? { result: diagnosis } : {}),
      ...(Object.keys(details).length > 0 ? { details } : {}),
      job: { ...task.job, outputKey },
    },
    options,
  )
}

/**
 * What a failed record says of an error around the job: a full disk (the result write) or a store
 * that stayed away past the run's retries as the service's state, without our paths, hosts or keys
 * (the task's log line carries the store's own words: `cause`, task-log.ts).
 */
function aroundJobText(error: unknown): string {
  if (isDiskFull(error)) return DISK_FULL_TEXT
  const storage = storageFailureOf(error)
  if (storage) return storage === 'unavailable' ? STORAGE_UNAVAILABLE_TEXT : STORAGE_FAILED_TEXT
  return errorText(error)
}

/** The failed record carries no progress (2.1). */
function failed(task: TaskState, message: string, options: TransitionOptions): TaskState {
  const { progress: _dropped, ...rest } = task
  return ended({ ...rest, status: 'failed', error: message, failed_at: options.at.toISOString() }, options)
}

/** Marks an ended task with the time the retention sweep removes it. */
function ended(task: TaskState, options: TransitionOptions): TaskState {
  if (!options.retentionMs) return task
  return { ...task, expires_at: new Date(options.at.getTime() + options.retentionMs).toISOString() }
}
