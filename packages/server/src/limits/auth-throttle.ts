import { ERROR_TEXTS, RATE_LIMIT_HEADERS } from '@mos/sdk/contract'
import { getRequestIP, type H3Event } from 'h3'
import { RateLimiterMemory } from 'rate-limiter-flexible'
import { ApiError } from '../errors.ts'

export interface AuthThrottleOptions {
  /** Wrong or missing keys accepted per client address per window; 0 = no throttle. */
  failuresPerMinute: number
  /** The window; 60 s in production. */
  windowSeconds: number
}

export interface AuthThrottle {
  /**
   * Called with the 401 a request is about to get: counts it against the client's address and,
   * once the address is over its allowance, turns it into a 429 with Retry-After.
   */
  refuse(event: H3Event, unauthorized: ApiError): Promise<ApiError>
  /**
   * The 429 for an address already over its allowance, else undefined: asked before a password is
   * checked at all, since a password (unlike a key) is short enough that answering a right one
   * to a guesser who is being throttled would still let the guessing go on.
   */
  throttled(event: H3Event): Promise<ApiError | undefined>
}

/**
 * Slows down key guessing: after N wrong keys in a minute from one address, wrong keys from it
 * get 429 until the minute is over. A right key is never throttled (a user behind the same NAT
 * as a guesser keeps working). Counted in this process: with several API processes a guesser gets
 * N per process, still far too few to guess a key. The address is the socket's, not
 * X-Forwarded-For (which the guesser writes); behind a proxy every client shares the proxy's.
 */
export function createAuthThrottle(options: AuthThrottleOptions): AuthThrottle {
  if (options.failuresPerMinute <= 0) return { refuse: async (_event, unauthorized) => unauthorized, throttled: async () => undefined }
  const limiter = new RateLimiterMemory({ points: options.failuresPerMinute, duration: options.windowSeconds })
  const tooMany = (msBeforeNext: number | undefined) =>
    new ApiError(429, ERROR_TEXTS.authThrottled(options.failuresPerMinute), {
      [RATE_LIMIT_HEADERS.retryAfter]: String(Math.max(1, Math.ceil((msBeforeNext ?? options.windowSeconds * 1000) / 1000))),
    })
  const addressOf = (event: H3Event) => getRequestIP(event) ?? 'unknown'
  return {
    async refuse(event, unauthorized) {
      try {
        await limiter.consume(addressOf(event))
        return unauthorized
      } catch (error) {
        return tooMany((error as { msBeforeNext?: number }).msBeforeNext)
      }
    },
    async throttled(event) {
      const used = await limiter.get(addressOf(event))
      return used && used.consumedPoints >= options.failuresPerMinute ? tooMany(used.msBeforeNext) : undefined
    },
  }
}
