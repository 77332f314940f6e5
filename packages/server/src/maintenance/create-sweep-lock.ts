import type { Config } from '../config/schema.ts'
import type { RedisConnections } from '../redis/redis-connections.ts'
import { queueRedisUrl } from '../queue/create-queue.ts'
import { createLocalLock, createRedisLock, type SweepLock } from './sweep-lock.ts'

/** A Redis lock wherever the deployment has a Redis (several processes may share it), else none needed. */
export function createSweepLock(config: Config, redis: RedisConnections): SweepLock {
  if (config.queue.driver === 'bullmq') return createRedisLock(redis.commands(queueRedisUrl(config)), config.queue.prefix)
  if (config.storage.driver === 'redis') return createRedisLock(redis.commands(config.storage.redis.url), config.storage.redis.prefix)
  return createLocalLock()
}
