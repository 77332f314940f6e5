import type { Config } from '../config/schema.ts'
import { errorText } from '../error-text.ts'
import { loadIORedis } from '../lazy-modules.ts'
import { queueRedisUrl } from '../queue/create-queue.ts'
import { printableRedisUrl } from './redis-unreachable.ts'

/** A Redis the deployment uses, with the settings that point at it. */
interface RedisUse {
  url: string
  settings: string[]
}

/** Every Redis this configuration talks to, each once, with the settings naming it. */
export function redisUses(config: Config): RedisUse[] {
  const uses = new Map<string, string[]>()
  const add = (url: string, setting: string) => uses.set(url, [...(uses.get(url) ?? []), setting])
  if (config.storage.driver === 'redis') add(config.storage.redis.url, 'SERVICE__STORAGE__REDIS__URL')
  if (config.queue.driver === 'bullmq')
    add(queueRedisUrl(config), config.queue.redis.url ? 'SERVICE__QUEUE__REDIS__URL' : 'SERVICE__STORAGE__REDIS__URL')
  if (config.rateLimit.redisUrl) add(config.rateLimit.redisUrl, 'SERVICE__RATE_LIMIT__REDIS_URL')
  return [...uses].map(([url, settings]) => ({ url, settings: [...new Set(settings)] }))
}

/**
 * Asks each Redis the configuration names for a PING before the service starts. Without it, a
 * Redis that is down at start showed as the Redis client's own words ("Reached the max retries per
 * request limit"), or, with the BullMQ queue, as a process that neither listened nor exited; the
 * operator gets the setting and the fix instead, and the supervisor a non-zero exit.
 */
export async function checkRedisAtStart(config: Config, timeoutMs = 5000): Promise<void> {
  const failures = await Promise.all(redisUses(config).map((use) => unanswered(use, timeoutMs)))
  const first = failures.find((failure) => failure !== undefined)
  if (first) throw new Error(first)
}

async function unanswered({ url, settings }: RedisUse, timeoutMs: number): Promise<string | undefined> {
  const client = new (loadIORedis().Redis)(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  })
  // ioredis rejects with 'Connection is closed.'; the socket's own error (ECONNREFUSED, ENOTFOUND, NOAUTH) says why.
  let cause: unknown
  client.on('error', (error) => {
    cause ??= error
  })
  try {
    await client.connect()
    await client.ping()
    return undefined
  } catch (error) {
    const names = settings.join(' and ')
    return `Redis at ${printableRedisUrl(url)} (${names}) does not answer: ${errorText(cause ?? error)}; start it, or set ${names} to the Redis of this deployment`
  } finally {
    client.disconnect()
  }
}
