import type { Config } from '../config/schema.ts'
import { queueRedisUrl } from '../queue/create-queue.ts'
import { createLocalLock, createRedisLock, type SweepLock } from './sweep-lock.ts'

/** A Redis lock wherever the deployment has a Redis (several processes may share it), else none needed. */
export function createSweepLock(config: Config): SweepLock {
  if (config.queue.driver === 'bullmq') return createRedisLock(queueRedisUrl(config), config.queue.prefix)
  if (config.storage.driver === 'redis') return createRedisLock(config.storage.redis.url, config.storage.redis.prefix)
  return createLocalLock()
}
