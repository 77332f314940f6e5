import { createHash, timingSafeEqual } from 'node:crypto'
import { API_KEY_HEADER, ERROR_TEXTS } from '@mos/sdk/contract'
import type { H3Event } from 'h3'
import { ApiError } from './errors.ts'
import type { Config } from './config/schema.ts'
import { createAuthThrottle } from './limits/auth-throttle.ts'

/** Holds the accepted API keys as digests, so comparing costs the same whatever key is sent. */
export interface KeyRing {
  /** Returns the matching key, or undefined. */
  match(candidate: string | null | undefined): string | undefined
}

const digest = (key: string) => createHash('sha256').update(key).digest()

/** Creates a key ring; every comparison is timing-safe and walks all keys. */
export function createKeyRing(keys: readonly string[]): KeyRing {
  const entries = keys.map((key) => ({ key, digest: digest(key) }))
  return {
    match(candidate) {
      if (!candidate) return undefined
      const probe = digest(candidate)
      let found: string | undefined
      for (const entry of entries) if (timingSafeEqual(probe, entry.digest) && found === undefined) found = entry.key
      return found
    },
  }
}

/** Checks the X-API-Key header; throws the contract's 401 otherwise. Returns the key. */
export function requireApiKey(event: H3Event, ring: KeyRing): string {
  const key = ring.match(event.req.headers.get(API_KEY_HEADER))
  if (!key) throw new ApiError(401, ERROR_TEXTS.unauthorized())
  return key
}

/**
 * The key check of every app a process serves (API and worker alike): the key or the contract's
 * 401, and wrong keys counted per client address, answered 429 past
 * SERVICE__SERVER__AUTH_FAILURES_PER_MINUTE.
 */
export function createKeyCheck(ring: KeyRing, config: Pick<Config, 'server' | 'rateLimit'>): (event: H3Event) => Promise<string> {
  const failures = createAuthThrottle({
    failuresPerMinute: config.server.authFailuresPerMinute,
    windowSeconds: config.rateLimit.windowSeconds,
  })
  return async (event) => {
    try {
      return requireApiKey(event, ring)
    } catch (error) {
      throw error instanceof ApiError ? await failures.refuse(event, error) : error
    }
  }
}
