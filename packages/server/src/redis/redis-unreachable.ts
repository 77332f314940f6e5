import type { Redis } from 'ioredis'
import { errorText } from '../error-text.ts'

/** The URL as it may be printed: a password in it is replaced. */
export function printableRedisUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    return '(not a redis:// URL)'
  }
}

/** A command given up on because its Redis could not be reached: which Redis (password masked), and why. */
export class RedisUnreachableError extends Error {
  override name = 'RedisUnreachableError'
  constructor(url: string, reason: string, options?: ErrorOptions) {
    super(`Redis at ${printableRedisUrl(url)} unreachable: ${reason}`, options)
  }
}

type FlushQueue = (error: Error, options?: unknown) => void

/**
 * Makes `client` reject the commands it gives up on with a `RedisUnreachableError` carrying the
 * socket's last error (`connect ECONNREFUSED …`, `getaddrinfo ENOTFOUND …`). ioredis rejects them
 * with 'Reached the max retries per request limit (which is 2)', which named neither the Redis nor
 * the reason, and that is what /readyz, the retry warnings and the request log showed.
 *
 * ioredis hands every queued command its error in one place, `flushQueue` (private in its typings,
 * stable across v4 and v5), so that is where the words are replaced.
 */
export function describeUnreachable(client: Redis, url: string): void {
  let lastError: unknown
  client.on('error', (error) => {
    lastError = error
  })
  client.on('ready', () => {
    lastError = undefined
  })
  const target = client as unknown as { flushQueue: FlushQueue }
  const flushQueue = target.flushQueue.bind(client)
  target.flushQueue = (error, options) => {
    if (error.name !== 'MaxRetriesPerRequestError') return flushQueue(error, options)
    const reason = lastError === undefined ? 'the connection closed and reconnecting failed' : errorText(lastError)
    flushQueue(new RedisUnreachableError(url, reason, { cause: error }), options)
  }
}
