import type { Logger } from '../logging/create-logger.ts'
import type { TaskHandler, TaskQueue } from './task-queue.ts'

export interface LocalQueueOptions {
  /** Tasks run at once; match the engine threads so a started task is really running. */
  concurrency: number
  handler: TaskHandler
  /** Where a task whose handler threw (storage unreachable) is reported. */
  logger?: Logger
}

/**
 * An in-process FIFO. Tasks stay `pending` until a slot is free, so their status tells the truth;
 * the records on storage, not this queue, are what survives a restart.
 */
export function createLocalQueue(options: LocalQueueOptions): TaskQueue {
  const waiting: { taskId: string; requestId?: string }[] = []
  const running = new Set<Promise<void>>()
  // Ids waiting or running: queuing a task twice is a no-op, as with the shared queue.
  const queued = new Set<string>()
  let closed = false

  const pump = () => {
    while (!closed && running.size < options.concurrency && waiting.length > 0) {
      const { taskId: id, requestId } = waiting.shift()!
      const run = options
        .handler(id, requestId ? { requestId } : {})
        .catch((error: unknown) => {
          options.logger?.error({ taskId: id, ...(requestId ? { requestId } : {}), error: (error as Error).message }, 'task run failed')
        })
        .finally(() => {
          running.delete(run)
          queued.delete(id)
          pump()
        })
      running.add(run)
    }
  }

  return {
    async enqueue(taskId, meta = {}) {
      if (closed || queued.has(taskId)) return
      queued.add(taskId)
      waiting.push({ taskId, ...meta })
      pump()
    },
    get waiting() {
      return waiting.length
    },
    get running() {
      return running.size
    },
    async close({ drain = true } = {}) {
      closed = true
      waiting.length = 0
      if (drain) await Promise.allSettled([...running])
    },
  }
}
