import type { Redis } from 'ioredis'
import type { Config } from '../config/schema.ts'
import { queueRedisUrl } from '../queue/create-queue.ts'
import type { RedisConnections } from '../redis/redis-connections.ts'
import type { Metrics } from './metrics.ts'

/** Which tasks the totals count: the whole deployment's (kept in Redis), or this process's since it started. */
export type TaskTotalsScope = 'cluster' | 'process'

/** Completed and failed tasks, as the console's metrics show them. */
export interface TaskTotals {
  readonly scope: TaskTotalsScope
  /** Counts a task that reached completed or failed. */
  add(status: 'completed' | 'failed'): Promise<void>
  read(): Promise<{ completed: number; failed: number }>
}

/**
 * This process's counts, for a deployment whose tasks all run in it (the local queue): its metrics
 * count every settled task already, so nothing more is added.
 */
function createProcessTaskTotals(metrics: Pick<Metrics, 'totals'>): TaskTotals {
  return {
    scope: 'process',
    add: async () => undefined,
    read: async () => {
      const { completed, failed } = metrics.totals()
      return { completed, failed }
    },
  }
}

/**
 * The deployment's counts in one Redis hash, which every worker process adds to: in a split
 * deployment an API process runs no task, and its own count would stay at nothing.
 */
function createRedisTaskTotals(redis: Redis, prefix: string): TaskTotals {
  const key = `${prefix}:task-totals`
  return {
    scope: 'cluster',
    add: async (status) => void (await redis.hincrby(key, status, 1)),
    async read() {
      const { completed, failed } = await redis.hgetall(key)
      return { completed: Number(completed ?? 0), failed: Number(failed ?? 0) }
    },
  }
}

/** The deployment's totals in the queue's Redis where tasks run through BullMQ (several processes), else this process's. */
export function createTaskTotals(config: Config, redis: RedisConnections, metrics: Pick<Metrics, 'totals'>): TaskTotals {
  if (config.queue.driver !== 'bullmq') return createProcessTaskTotals(metrics)
  return createRedisTaskTotals(redis.commands(queueRedisUrl(config)), config.queue.prefix)
}
