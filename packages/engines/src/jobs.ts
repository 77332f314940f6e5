import type { MessagePort } from 'node:worker_threads'
import type { OperationName } from './operations/index.ts'

/** A job names its operation in the registry (operations/index.ts): the contract's task type. */
export type JobName = OperationName

/**
 * Where a job reads its input: a local path (no copy through the event loop) or bytes moved in: the
 * whole ArrayBuffer under them goes to the thread, leaving the caller's views empty (pass a copy to
 * keep them, or to run the same bytes twice).
 */
export type JobInput = { path: string } | { bytes: Uint8Array }

export interface EngineJob {
  name: JobName
  input: JobInput
  /** Input format (file extension, lower case). */
  format: string
  /** Original file name, for operations that look at sibling names (zip bundles). */
  filename?: string
  /** Operation options, parsed in the worker with the operation's schema (operations/<name>.ts). */
  options: Record<string, unknown>
  /** When set, the worker writes the result here instead of returning bytes. */
  outputPath?: string
}

/** What a job sends back; failures are data, never thrown across the thread boundary. */
export type JobResult = JobSuccess | JobFailure

export interface JobSuccess {
  ok: true
  /** The result bytes, unless the worker wrote them to `outputPath`. */
  bytes?: Uint8Array
  size: number
  /** Extension of the output file (glb, zip, png, ktx2, ...). */
  extension: string
  /** Operation-specific facts for the task record (diagnosis result, repair counts, ...). */
  details?: Record<string, unknown>
}

export interface JobFailure {
  ok: false
  message: string
  /**
   * Set when the job failed writing its result to `outputPath` (the service's file store), not on
   * its input: the system's code and words, for the service to say as its store failing.
   */
  outputWriteError?: { code: string; message: string }
}

/** Message a worker posts on the job's progress port. */
export interface ProgressMessage {
  progress: number
}

/** A log line written in an engine thread, posted to the main thread, which logs it with the task's fields. */
export interface EngineLogEntry {
  level: 'error' | 'warn' | 'info' | 'debug'
  message: string
  fields?: Record<string, unknown>
}

/** Carries an engine thread's log line on the job's port. */
export interface LogMessage {
  log: EngineLogEntry
}

/**
 * The result of a thread's last job, sent on the job's port instead of returned: the thread then
 * ends itself (once the main thread has the result) and piscina starts a fresh one. Returning the
 * result would free the thread in piscina, which could hand it the next job before it ends.
 */
export interface FinalMessage {
  final: JobResult
  /** Why the thread retires, with its figures at the time. */
  retiring: { reason: string; jobs: number; memoryMb: number }
}

/**
 * A thread's last message on a job's port when it answers through piscina: its answer and its port
 * are two channels, so the answer can arrive before the lines sent ahead of it; this says they are in.
 */
export interface EndMessage {
  end: true
}

/** Everything a worker posts on a job's port. */
export type PortMessage = ProgressMessage | LogMessage | FinalMessage | EndMessage

/** The job as it crosses into the worker, with its private progress channel. */
export interface WorkerJob extends EngineJob {
  port?: MessagePort
}
