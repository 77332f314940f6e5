/** What travels with a queued task besides its id (a shared queue's job data). */
export interface EnqueueMeta {
  /** The upload's X-Request-Id, for the log lines of whichever process runs the task. */
  requestId?: string
}

/**
 * Hands task ids to whoever runs them. The local queue runs them in this process; a shared queue
 * (BullMQ on Redis) lets several worker processes take them.
 */
export interface TaskQueue {
  enqueue(taskId: string, meta?: EnqueueMeta): Promise<void>
  /** Tasks waiting (not yet started). */
  readonly waiting: number
  /** Tasks running now. */
  readonly running: number
  /** Stops taking new work; resolves once running tasks have settled (or at once when `drain` is false). */
  close(options?: { drain?: boolean }): Promise<void>
  /** Resolves once the queue's connection is up (a shared queue); start-up fails early otherwise. */
  ready?(): Promise<void>
  /** Resolves when the queue's backend answers (readiness); absent when the queue lives in this process. */
  ping?(): Promise<void>
}

/** Runs one task; `signal` aborts when the queue hands the task back (stopping without drain). */
export type TaskHandler = (taskId: string, options?: { signal?: AbortSignal; requestId?: string }) => Promise<void>
