import type { Job, Worker as BullWorker } from 'bullmq'
import type { Redis } from 'ioredis'
import { loadBullMQ } from '../lazy-modules.ts'
import type { TaskHandler } from './task-queue.ts'

export interface BullWorkerOptions {
  queueName: string
  connection: Redis
  prefix: string
  concurrency: number
  handler: TaskHandler
  lockMs: number
  stalledCheckMs: number
  maxStalls: number
  name?: string | undefined
}

/** A BullMQ worker running tasks in this process, and the way to hand its tasks back when stopping. */
export interface BullTaskWorker {
  worker: BullWorker
  /** Stopping without drain: aborts the tasks running here, each then goes straight back to the queue. */
  handBack(): void
}

/** The job's data: only the task id (and the upload's request id), everything else is in the task record. */
type TaskJob = Job<{ taskId: string; requestId?: string }>

export function createBullWorker(options: BullWorkerOptions): BullTaskWorker {
  const { Worker, WaitingError } = loadBullMQ()
  const { handler } = options
  const active = new Map<string, AbortController>()
  let handingBack = false
  const worker = new Worker(
    options.queueName,
    async (job: TaskJob, token?: string) => {
      const controller = new AbortController()
      active.set(job.id!, controller)
      try {
        await handler(job.data.taskId, { signal: controller.signal, ...(job.data.requestId ? { requestId: job.data.requestId } : {}) })
      } finally {
        active.delete(job.id!)
      }
      if (handingBack && controller.signal.aborted) {
        // Stopping without drain: give the task straight back instead of waiting for the lock to expire.
        await job.moveToWait(token)
        throw new WaitingError()
      }
    },
    {
      connection: options.connection,
      prefix: options.prefix,
      concurrency: options.concurrency,
      lockDuration: options.lockMs,
      stalledInterval: options.stalledCheckMs,
      maxStalledCount: options.maxStalls,
      ...(options.name ? { name: options.name } : {}),
    },
  )
  return {
    worker,
    handBack() {
      handingBack = true
      for (const controller of active.values()) controller.abort()
    },
  }
}
