import type { Job, Worker as BullWorker } from 'bullmq'
import { loadBullMQ } from '../lazy-modules.ts'
import type { Redis } from 'ioredis'
import type { Logger } from '../logging/create-logger.ts'
import type { TaskHandler, TaskQueue } from './task-queue.ts'
import { withTimeout } from '../with-timeout.ts'

export interface BullQueueOptions {
  /** The process's BullMQ connection (`maxRetriesPerRequest: null`); the worker duplicates it for its blocking reads. */
  connection: Redis
  /** BullMQ key prefix (several deployments can share one Redis). */
  prefix: string
  /** Job lock: renewed every half of it while a task runs; a dead worker's task is free again after it. */
  lockMs: number
  /** How often this worker looks for tasks of dead workers. */
  stalledCheckMs: number
  /** How often BullMQ may put a stalled task back before dropping it (the task record keeps its own count). */
  maxStalls: number
  /** Run tasks in this process (roles `all` and `worker`); without it, this process only enqueues (role `api`). */
  consume?: { concurrency: number; handler: TaskHandler }
  /** Worker name shown in BullMQ (host and pid). */
  name?: string
  /** Where connection errors are reported. */
  logger?: Logger
}

const QUEUE_NAME = 'tasks'
/** How long start-up waits for the queue's Redis before giving up with a clear message. */
const READY_TIMEOUT_MS = 30_000
/** Queue figures for health are read from Redis at most this often. */
const COUNTS_REFRESH_MS = 2000

/**
 * The shared queue: BullMQ on Redis. A job is only a task id (the job id is the task id, so queuing
 * a task twice is a no-op); everything else lives in the task record, which the worker updates with
 * progress as it runs, so any API process can answer for it.
 *
 * Delivery is at least once: a worker that dies mid-task stops renewing its lock, and after
 * `lockMs` another worker's stalled check puts the job back in the queue. The runner writes a fixed
 * output key per task and never records a second ending, so a re-run leaves one result.
 */
export function createBullQueue(options: BullQueueOptions): TaskQueue & { ready(): Promise<void> } {
  const { connection } = options
  const { Queue, Worker, WaitingError } = loadBullMQ()
  const queue = new Queue(QUEUE_NAME, {
    connection,
    prefix: options.prefix,
    defaultJobOptions: {
      // The task record, not the job, is the lasting state: finished jobs go at once.
      removeOnComplete: true,
      removeOnFail: true,
      // A handler error (storage unreachable) is retried; the runner's own failures are data, not errors.
      attempts: 3,
      backoff: { type: 'exponential', delay: 2000 },
    },
  })
  // Connection errors repeat every retry: say each distinct one once a minute, not hundreds of times.
  const said = new Map<string, number>()
  const report = (where: string) => (error: Error) => {
    const text = `${where}: ${error.message}`
    if (Date.now() - (said.get(text) ?? 0) < 60_000) return
    said.set(text, Date.now())
    options.logger?.error({ component: where, error: error.message }, `queue ${where} error`)
  }
  queue.on('error', report('queue'))

  const active = new Map<string, AbortController>()
  let handingBack = false
  let counts = { waiting: 0, active: 0 }
  let worker: BullWorker | undefined

  if (options.consume) {
    const { handler, concurrency } = options.consume
    worker = new Worker(
      QUEUE_NAME,
      async (job: Job<{ taskId: string; requestId?: string }>, token?: string) => {
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
        connection,
        prefix: options.prefix,
        concurrency,
        lockDuration: options.lockMs,
        stalledInterval: options.stalledCheckMs,
        maxStalledCount: options.maxStalls,
        ...(options.name ? { name: options.name } : {}),
      },
    )
    worker.on('error', report('worker'))
  }

  const refresh = async () => {
    try {
      const c = await queue.getJobCounts('wait', 'prioritized', 'delayed', 'active')
      counts = { waiting: (c.wait ?? 0) + (c.prioritized ?? 0) + (c.delayed ?? 0), active: c.active ?? 0 }
    } catch {
      // Redis away: keep the last figures; health is not the place to fail.
    }
  }
  const timer = setInterval(refresh, COUNTS_REFRESH_MS)
  timer.unref()

  return {
    async ready() {
      await withTimeout(
        (async () => {
          await queue.waitUntilReady()
          if (worker) await worker.waitUntilReady()
        })(),
        READY_TIMEOUT_MS,
        `cannot reach the queue's Redis at ${connection.options.host}:${connection.options.port} (waited ${READY_TIMEOUT_MS / 1000} s)`,
      )
      await refresh()
    },
    async enqueue(taskId, meta = {}) {
      await queue.add('run', { taskId, ...meta }, { jobId: taskId })
    },
    async ping() {
      // A cheap round trip through the queue's own connection (readiness).
      await queue.getJobCounts('wait')
    },
    /** Cluster-wide, from Redis, at most COUNTS_REFRESH_MS old. */
    get waiting() {
      return counts.waiting
    },
    get running() {
      return counts.active
    },
    async close({ drain = true } = {}) {
      clearInterval(timer)
      if (worker) {
        if (!drain) {
          handingBack = true
          for (const controller of active.values()) controller.abort()
        }
        // Not forced: waits for the jobs in flight (all of them when draining; only the moment it
        // takes to hand each back otherwise). No new job is taken from here on.
        await worker.close()
      }
      await queue.close()
    },
  }
}
