import { hostname } from 'node:os'
import { ConfigError } from '../config/load.ts'
import type { Config } from '../config/schema.ts'
import type { RedisConnections } from '../redis/redis-connections.ts'
import type { Logger } from '../logging/create-logger.ts'
import { currentRuntime, rolesOn } from '../runtime.ts'
import { createBullQueue } from './bullmq-queue.ts'
import { createLocalQueue } from './local-queue.ts'
import type { TaskHandler, TaskQueue } from './task-queue.ts'

export type Role = Config['server']['role']

/** Whether a process of this role runs tasks (`all`, `worker`) or only queues them (`api`). */
const runsTasks = (role: Role) => role !== 'api'
/** Whether a process of this role serves the HTTP API (`all`, `api`); a worker serves health only. */
export const servesApi = (role: Role) => role !== 'worker'

/** The Redis of the bullmq queue: its own URL, else the storage's. */
export const queueRedisUrl = (config: Config) => config.queue.redis.url || config.storage.redis.url

/**
 * Stops at start-up on combinations that cannot work: a role the runtime cannot take (Deno and Bun
 * serve the API only), split roles need a shared queue, and a shared queue needs records and files
 * that every process sees.
 */
export function checkDeployment(config: Config): void {
  const role = config.server.role
  const runtime = currentRuntime()
  if (!rolesOn(runtime).includes(role)) {
    throw new ConfigError(
      `SERVICE__SERVER__ROLE=${role} cannot run on ${runtime}: tasks run in Node's engine threads, so ${runtime} serves only the API ` +
        '(set SERVICE__SERVER__ROLE=api, with SERVICE__QUEUE__DRIVER=bullmq, and run the workers with `npm start` and SERVICE__SERVER__ROLE=worker)',
    )
  }
  if (role !== 'all' && config.queue.driver !== 'bullmq') {
    throw new ConfigError(`SERVICE__SERVER__ROLE=${role} needs SERVICE__QUEUE__DRIVER=bullmq (the local queue lives inside one process)`)
  }
  if (config.queue.driver === 'bullmq' && (config.storage.driver === 'memory' || config.storage.filesDriver === 'memory')) {
    throw new ConfigError(
      'SERVICE__QUEUE__DRIVER=bullmq needs storage that other processes see (fs on a shared folder, redis or s3), not memory',
    )
  }
}

/** The queue the configuration names, consuming with `handler` when this role runs tasks. */
export function createTaskQueue(config: Config, handler: TaskHandler, redis: RedisConnections, logger: Logger): TaskQueue {
  const concurrency = config.engines.threads
  if (config.queue.driver === 'local') return createLocalQueue({ concurrency, handler, logger })
  const connection = redis.queue(queueRedisUrl(config))
  return createBullQueue({
    connection,
    ping: () => redis.ping(connection),
    prefix: config.queue.prefix,
    lockMs: config.queue.lockSeconds * 1000,
    stalledCheckMs: config.queue.stalledCheckSeconds * 1000,
    maxStalls: config.tasks.maxAttempts,
    name: `${hostname()}:${process.pid}`,
    logger,
    ...(runsTasks(config.server.role) ? { consume: { concurrency, handler } } : {}),
  })
}
