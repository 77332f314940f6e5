import { ERROR_TEXTS, RATE_LIMIT_HEADERS } from '@mos/sdk/contract'
import type { H3Event } from 'h3'
import type { Redis } from 'ioredis'
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible'
import type { Guard } from '../context.ts'
import { ApiError } from '../errors.ts'
import { sha256Hex } from '../web-crypto.ts'

export interface RateLimitOptions {
  perMinute: number
  /** The window; 60 s in production (the contract's "per minute"), shorter in tests. */
  windowSeconds: number
  /** Shared counters for a cluster (the process's Redis command connection); absent = counted in this process. */
  redis?: Redis
  prefix: string
}

export interface RateLimit {
  guard: Guard
}

/** Keys are never stored as they are: the counter's name is a digest of the key. */
const counterName = async (apiKey: string) => (await sha256Hex(apiKey)).slice(0, 32)

/**
 * Variant A's per-key rate limit (rate-limiter-flexible). With a Redis URL every process counts in
 * the same keys, so the limit holds across a cluster; should Redis stop answering, each process
 * falls back to counting on its own (the insurance limiter) rather than refusing all traffic.
 */
export function createRateLimit(options: RateLimitOptions): RateLimit {
  const base = { points: options.perMinute, duration: options.windowSeconds, keyPrefix: options.prefix }
  // The connection is lazy: it connects on the first counted request; its failed commands fall
  // through to the insurance limiter.
  const limiter: RateLimiterAbstract = options.redis
    ? new RateLimiterRedis({ ...base, storeClient: options.redis, insuranceLimiter: new RateLimiterMemory(base) })
    : new RateLimiterMemory(base)

  const headers = (res: RateLimiterRes) => ({
    [RATE_LIMIT_HEADERS.limit]: String(options.perMinute),
    [RATE_LIMIT_HEADERS.remaining]: String(Math.max(0, res.remainingPoints)),
    [RATE_LIMIT_HEADERS.reset]: String(Math.ceil((Date.now() + res.msBeforeNext) / 1000)),
  })

  const guard: Guard = async (event: H3Event, apiKey: string) => {
    let res: RateLimiterRes
    try {
      res = await limiter.consume(await counterName(apiKey))
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error
      throw new ApiError(429, ERROR_TEXTS.rateLimited(options.perMinute), {
        ...headers(error),
        [RATE_LIMIT_HEADERS.retryAfter]: String(Math.max(1, Math.ceil(error.msBeforeNext / 1000))),
      })
    }
    // On the success response and on any later error of this request (both merged by h3 / renderError).
    for (const [name, value] of Object.entries(headers(res))) {
      event.res.headers.set(name, value)
      event.res.errHeaders.set(name, value)
    }
  }

  return { guard }
}
