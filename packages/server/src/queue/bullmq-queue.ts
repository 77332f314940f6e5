import type { Queue } from 'bullmq'
import type { Redis } from 'ioredis'
import { loadBullMQ } from '../lazy-modules.ts'
import type { Logger } from '../logging/create-logger.ts'
import { withTimeout } from '../with-timeout.ts'
import { createBullWorker } from './bullmq-worker.ts'
import type { TaskHandler, TaskQueue } from './task-queue.ts'

export interface BullQueueOptions {
  /** The process's BullMQ connection (`maxRetriesPerRequest: null`); the worker duplicates it for its blocking reads. */
  connection: Redis
  /**
   * One round trip on `connection` for readiness that says why Redis is away (`RedisConnections.ping`);
   * by default a plain PING, which on this connection (it never gives up on a command) waits for Redis.
   */
  ping?: () => Promise<void>
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
  const { Queue } = loadBullMQ()
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
  const report = createErrorReporter(options.logger)
  queue.on('error', report('queue'))
  const consumer = options.consume ? createBullWorker({ ...options, ...options.consume, queueName: QUEUE_NAME }) : undefined
  consumer?.worker.on('error', report('worker'))
  const counts = createQueueCounts(queue)

  return {
    async ready() {
      const connected = async () => {
        await queue.waitUntilReady()
        await consumer?.worker.waitUntilReady()
      }
      const where = `${connection.options.host}:${connection.options.port}`
      await withTimeout(connected(), READY_TIMEOUT_MS, `cannot reach the queue's Redis at ${where} (waited ${READY_TIMEOUT_MS / 1000} s)`)
      await counts.refresh()
    },
    async enqueue(taskId, meta = {}) {
      await queue.add('run', { taskId, ...meta }, { jobId: taskId })
    },
    async ping() {
      // A round trip on the queue's own connection, which BullMQ's queue and worker use.
      await (options.ping ? options.ping() : connection.ping())
    },
    /** Cluster-wide, from Redis, at most COUNTS_REFRESH_MS old. */
    get waiting() {
      return counts.waiting
    },
    get running() {
      return counts.active
    },
    async close({ drain = true } = {}) {
      counts.stop()
      if (consumer) {
        if (!drain) consumer.handBack()
        // Not forced: waits for the jobs in flight (all of them when draining; only the moment it
        // takes to hand each back otherwise). No new job is taken from here on.
        await consumer.worker.close()
      }
      await queue.close()
    },
  }
}

/** Connection errors repeat every retry: each distinct one is said once a minute, not hundreds of times. */
function createErrorReporter(logger: Logger | undefined): (where: string) => (error: Error) => void {
  const said = new Map<string, number>()
  return (where) => (error) => {
    const text = `${where}: ${error.message}`
    if (Date.now() - (said.get(text) ?? 0) < 60_000) return
    said.set(text, Date.now())
    logger?.error({ component: where, error: error.message }, `queue ${where} error`)
  }
}

/** The queue's cluster-wide figures for health, read from Redis every COUNTS_REFRESH_MS. */
function createQueueCounts(queue: Pick<Queue, 'getJobCounts'>) {
  let counts = { waiting: 0, active: 0 }
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
    refresh,
    get waiting() {
      return counts.waiting
    },
    get active() {
      return counts.active
    },
    stop: () => clearInterval(timer),
  }
}
