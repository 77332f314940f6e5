import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { afterAll, describe, expect, it } from 'vitest'
import { REDIS_URL, redisAvailable, removeRedisKeys, uniquePrefix } from '../../../test/support/redis.ts'
import { createRedisTrialCounter, createTrialCounter } from '../src/licensing/trial-counter.ts'
import { createRedisConnections } from '../src/redis/redis-connections.ts'

const hasRedis = await redisAvailable()

describe.skipIf(!hasRedis)('trial counter shared through Redis', () => {
  const prefix = uniquePrefix('trial')
  afterAll(() => removeRedisKeys(prefix))

  it('lets exactly the allowed number of files through when two processes race for the last ones', async () => {
    const records = createStorage({ driver: memoryDriver() })
    // What a single node counted before the deployment grew: the shared count starts from it.
    await createTrialCounter(records).reserve(7, 100)
    // Two processes: each with its own connections.
    const [redisA, redisB] = [createRedisConnections({ name: prefix }), createRedisConnections({ name: prefix })]
    const a = createRedisTrialCounter(redisA.commands(REDIS_URL), prefix, records)
    const b = createRedisTrialCounter(redisB.commands(REDIS_URL), prefix, records)
    try {
      const attempts = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).reserve(1, 10)))
      expect(attempts.filter(Boolean)).toHaveLength(3)
      expect(await a.used()).toBe(10)
      expect(await b.used()).toBe(10)
      expect(await b.reserve(1, 10)).toBe(false)
      // The records keep a copy for a later single-node start (concurrent copies may land out of order).
      expect(await createTrialCounter(records).used()).toBeGreaterThanOrEqual(8)
    } finally {
      await redisA.close()
      await redisB.close()
    }
  })
})
