import { Redis } from 'ioredis'

const URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

/**
 * The Redis URL when a server answers there, else undefined: tests that need Redis skip with a
 * message, except under REQUIRE_REDIS=1 (CI), where a missing Redis fails the run.
 */
export async function redisAvailable(): Promise<string | undefined> {
  const client = new Redis(URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1_000, retryStrategy: () => null })
  client.on('error', () => undefined)
  try {
    await client.connect()
    if ((await client.ping()) === 'PONG') return URL
  } catch {
    // below
  } finally {
    client.disconnect()
  }
  const message = `no Redis answers at ${URL} (start one, or set TEST_REDIS_URL)`
  if (process.env.REQUIRE_REDIS === '1') throw new Error(message)
  console.warn(`[skip] ${message}`)
  return undefined
}
