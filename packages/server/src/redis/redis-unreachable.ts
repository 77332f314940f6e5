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

/** What one connection knows of its Redis, from its own events. */
export interface ConnectionWatch {
  /** The socket's last error since the connection was last ready (`connect ECONNREFUSED …`), if any. */
  lastError(): unknown
  /**
   * Why the connection is not up now (closed, or between attempts to reconnect); undefined when it is
   * up, or still on its first connect and no attempt has failed.
   */
  unreachable(): RedisUnreachableError | undefined
}

/** States in which ioredis holds commands back (its offline queue) until a connect succeeds. */
const DOWN = new Set(['connecting', 'connect', 'reconnecting', 'close', 'end'])

/** Follows `client`'s errors and readiness, so what it knows can be said without sending a command. */
export function watchConnection(client: Redis, url: string): ConnectionWatch {
  let lastError: unknown
  let wasReady = false
  client.on('error', (error) => {
    lastError = error
  })
  client.on('ready', () => {
    lastError = undefined
    wasReady = true
  })
  return {
    lastError: () => lastError,
    unreachable() {
      if (!DOWN.has(client.status)) return undefined
      if (client.status === 'end') return new RedisUnreachableError(url, 'the connection is closed')
      // A first connect that has not failed yet may well succeed: a command waits for it.
      if (!wasReady && lastError === undefined) return undefined
      // A Redis that shut down cleanly closes the socket with no error: until an attempt fails, that is all we know.
      return new RedisUnreachableError(url, `${lastError === undefined ? 'the connection closed' : errorText(lastError)} (reconnecting)`)
    },
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
 * stable across v4 and v5), so that is where the words are replaced. Why a patch and not an option
 * or a wrapper (ioredis 5.11): the error is built inside its close handler
 * (`flushQueue(new MaxRetriesPerRequestError(n))`, redis/event_handler.js) and no option names it;
 * the commands are sent from a dozen call sites (records, idempotency, trial counter, rate limit,
 * batches, sweep lock, task channel), each of which would have to catch and rewrap with this
 * connection's watch, and a Proxy over every command would be a larger reach into the client than
 * this one method. Renamed in a later ioredis, `bind` below throws as the first connection opens,
 * and storage-unavailable.test.ts (a Redis of the test's own, stopped under a running service: a
 * real outage, no patch on the test's side) fails on the words.
 */
export function describeUnreachable(client: Redis, url: string, watch: ConnectionWatch): void {
  const target = client as unknown as { flushQueue: FlushQueue }
  const flushQueue = target.flushQueue.bind(client)
  target.flushQueue = (error, options) => {
    if (error.name !== 'MaxRetriesPerRequestError') return flushQueue(error, options)
    const lastError = watch.lastError()
    const reason = lastError === undefined ? 'the connection closed and reconnecting failed' : errorText(lastError)
    flushQueue(new RedisUnreachableError(url, reason, { cause: error }), options)
  }
}
