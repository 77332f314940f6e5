import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'

export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

/**
 * Whether a Redis answers at REDIS_URL. Tests that need one skip with a message when none does,
 * except under REQUIRE_REDIS=1 (CI), where a missing Redis is a failure.
 */
export async function redisAvailable(): Promise<boolean> {
  if (await redisAnswers(REDIS_URL, 1000)) return true
  if (process.env.REQUIRE_REDIS === '1') throw new Error(`REQUIRE_REDIS=1 but no Redis answers at ${REDIS_URL}`)
  console.warn(`[test] no Redis at ${REDIS_URL}: tests that need Redis are skipped (set REQUIRE_REDIS=1 to fail instead)`)
  return false
}

/** Whether the Redis at `url` answers a PING within `connectTimeoutMs`, with no retry. */
export async function redisAnswers(url: string, connectTimeoutMs: number): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, connectTimeout: connectTimeoutMs, maxRetriesPerRequest: 0, retryStrategy: () => null })
  client.on('error', () => undefined)
  try {
    await client.connect()
    return (await client.ping()) === 'PONG'
  } catch {
    return false
  } finally {
    client.disconnect()
  }
}

/** A key prefix of its own for one test run, so runs never see each other's keys. */
export const uniquePrefix = (name: string) => `mos-test-${name}-${randomUUID().slice(0, 8)}`

/** Removes every key under `prefix` (the run's own keys). */
export async function removeRedisKeys(prefix: string): Promise<number> {
  const client = new Redis(REDIS_URL)
  try {
    let cursor = '0'
    let removed = 0
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500)
      cursor = next
      if (keys.length > 0) removed += await client.unlink(...keys)
    } while (cursor !== '0')
    return removed
  } finally {
    client.disconnect()
  }
}

/** Keys under `prefix` now. */
export async function redisKeys(prefix: string): Promise<string[]> {
  const client = new Redis(REDIS_URL)
  try {
    const keys: string[] = []
    let cursor = '0'
    do {
      const [next, found] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500)
      cursor = next
      keys.push(...found)
    } while (cursor !== '0')
    return keys
  } finally {
    client.disconnect()
  }
}
