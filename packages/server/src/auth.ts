import { API_KEY_HEADER, ERROR_TEXTS } from '@mos/sdk/contract'
import type { H3Event } from 'h3'
import { ApiError } from './errors.ts'
import type { Config } from './config/schema.ts'
import { createAuthThrottle } from './limits/auth-throttle.ts'
import { equalInConstantTime, sha256 } from './web-crypto.ts'

/** Holds the accepted API keys as digests, so comparing costs the same whatever key is sent. */
export interface KeyRing {
  /**
   * Resolves to the matching key, or undefined. (Asynchronous, as Web Crypto's digest is: named
   * `find`, not the old synchronous `match`, so a caller written for that fails to compile.)
   */
  find(candidate: string | null | undefined): Promise<string | undefined>
}

/** Creates a key ring; every comparison is timing-safe and walks all keys. */
export function createKeyRing(keys: readonly string[]): KeyRing {
  // Digested once, on first use (Web Crypto's digest is asynchronous).
  let entries: Promise<{ key: string; digest: Uint8Array }[]> | undefined
  return {
    async find(candidate) {
      if (!candidate) return undefined
      entries ??= Promise.all(keys.map(async (key) => ({ key, digest: await sha256(key) })))
      const probe = await sha256(candidate)
      let found: string | undefined
      for (const entry of await entries) if (equalInConstantTime(probe, entry.digest) && found === undefined) found = entry.key
      return found
    },
  }
}

/** Checks the X-API-Key header; throws the contract's 401 otherwise. Returns the key. */
export async function requireApiKey(event: H3Event, ring: KeyRing): Promise<string> {
  const key = await ring.find(event.req.headers.get(API_KEY_HEADER))
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
      return await requireApiKey(event, ring)
    } catch (error) {
      throw error instanceof ApiError ? await failures.refuse(event, error) : error
    }
  }
}
