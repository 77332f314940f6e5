import { createHash, timingSafeEqual } from 'node:crypto'
import { API_KEY_HEADER, ERROR_TEXTS } from '@mos/sdk/contract'
import type { H3Event } from 'h3'
import { ApiError } from './errors.ts'

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
