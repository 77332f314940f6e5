/**
 * Hands task ids to whoever runs them. The local queue runs them in this process; a shared queue
 * (BullMQ on Redis) lets several worker processes take them.
 */
export interface TaskQueue {
  enqueue(taskId: string): Promise<void>
  /** Tasks waiting (not yet started). */
  readonly waiting: number
  /** Tasks running now. */
  readonly running: number
  /** Stops taking new work; resolves once running tasks have settled (or at once when `drain` is false). */
  close(options?: { drain?: boolean }): Promise<void>
}

export type TaskHandler = (taskId: string) => Promise<void>
