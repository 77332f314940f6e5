import { describe, expect, it } from 'vitest'
import { createRedisLock } from '../src/maintenance/sweep-lock.ts'
import { createRedisConnections } from '../src/redis/redis-connections.ts'
import { REDIS_URL, redisAvailable, removeRedisKeys, uniquePrefix } from '../../../test/support/redis.ts'

const hasRedis = await redisAvailable()

describe.skipIf(!hasRedis)('sweep lock on Redis', () => {
  it('lets one process of several sweep per round, and another take over once it lapses', async () => {
    const prefix = uniquePrefix('lock')
    // Two processes: each with its own connections.
    const [redisA, redisB] = [createRedisConnections({ name: prefix }), createRedisConnections({ name: prefix })]
    const a = createRedisLock(redisA.commands(REDIS_URL), prefix)
    const b = createRedisLock(redisB.commands(REDIS_URL), prefix)
    try {
      expect(await a.acquire('sweep', 400)).toBe(true)
      expect(await b.acquire('sweep', 400)).toBe(false)
      expect(await a.acquire('sweep', 400)).toBe(true) // still its own: extended
      expect(await b.acquire('sweep', 400)).toBe(false)
      await new Promise((resolve) => setTimeout(resolve, 600)) // a stopped (crashed) without renewing
      expect(await b.acquire('sweep', 400)).toBe(true)
      expect(await a.acquire('sweep', 400)).toBe(false)
    } finally {
      await a.close()
      await b.close()
      await redisA.close()
      await redisB.close()
      await removeRedisKeys(prefix)
    }
  })
})
