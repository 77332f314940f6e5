import { describe, it } from 'vitest'
import { createBullQueue } from '../src/queue/bullmq-queue.ts'
import { createLocalQueue } from '../src/queue/local-queue.ts'
import { createRedisConnections, type RedisConnections } from '../src/redis/redis-connections.ts'
import { describeQueue } from './support/queue-suite.ts'
import { REDIS_URL, redisAvailable, removeRedisKeys, uniquePrefix } from '../../../test/support/redis.ts'

describeQueue('local', { create: (handler, concurrency) => createLocalQueue({ handler, concurrency }), shared: false })

const hasRedis = await redisAvailable()
if (hasRedis) {
  // A fresh prefix per test: no job of one test is seen by the next.
  let prefix = uniquePrefix('queue')
  const redis: RedisConnections[] = []
  describeQueue('bullmq', {
    async create(handler, concurrency) {
      // Each queue stands for a process: its own connection set.
      const connections = createRedisConnections({ name: prefix })
      redis.push(connections)
      const queue = createBullQueue({
        connection: connections.queue(REDIS_URL),
        prefix,
        lockMs: 30_000,
        stalledCheckMs: 30_000,
        maxStalls: 3,
        consume: { handler, concurrency },
      })
      await queue.ready()
      return queue
    },
    shared: true,
    async cleanup() {
      await Promise.all(redis.splice(0).map((connections) => connections.close()))
      await removeRedisKeys(prefix)
      prefix = uniquePrefix('queue')
    },
  })
} else {
  describe('queue: bullmq', () => it.skip(`needs a Redis at ${REDIS_URL}`))
}
