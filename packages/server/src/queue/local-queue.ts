import type { TaskHandler, TaskQueue } from './task-queue.ts'

export interface LocalQueueOptions {
  /** Tasks run at once; match the engine threads so a started task is really running. */
  concurrency: number
  handler: TaskHandler
}

/**
 * An in-process FIFO. Tasks stay `pending` until a slot is free, so their status tells the truth;
 * the records on storage, not this queue, are what survives a restart.
 */
export function createLocalQueue(options: LocalQueueOptions): TaskQueue {
  const waiting: string[] = []
  const running = new Set<Promise<void>>()
  let closed = false

  const pump = () => {
    while (!closed && running.size < options.concurrency && waiting.length > 0) {
      const id = waiting.shift()!
      const run = options.handler(id).finally(() => {
        running.delete(run)
        pump()
      })
      running.add(run)
    }
  }

  return {
    async enqueue(taskId) {
      if (closed) return
      waiting.push(taskId)
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
