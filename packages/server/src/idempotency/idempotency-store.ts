import type { Redis } from 'ioredis'
import type { Storage } from 'unstorage'

/** What is kept of one Idempotency-Key: the request it was first used with and, once answered, the answer. */
export interface IdempotencyEntry {
  /** Digest of the first request (endpoint, fields, files). */
  fingerprint: string
  /** The first request's response body; absent while it is still being handled. */
  response?: unknown
  /** When the key may be used again (ms since the epoch). */
  expiresAt: number
}

/**
 * Idempotency keys with a time to live. `claim` is atomic: of two requests with one key, exactly
 * one gets it (SET NX in Redis; a map in the one process of a local deployment).
 */
export interface IdempotencyStore {
  /** Claims `id` for a request: undefined when it is this request's, else the entry that holds it. */
  claim(id: string, fingerprint: string, ttlMs: number): Promise<IdempotencyEntry | undefined>
  /** Keeps this request's claim for `ttlMs` more (its handler is still at work). */
  renew(id: string, ttlMs: number): Promise<void>
  /** Records the claimed request's answer (kept until the entry's expiry). */
  complete(id: string, entry: IdempotencyEntry): Promise<void>
  /** Gives a claim up (the request failed: a retry may run it again). */
  release(id: string): Promise<void>
  /** The entry of `id` as it is now. */
  get(id: string): Promise<IdempotencyEntry | undefined>
}

/** Keys in Redis, shared by every process of a cluster; Redis drops them at their expiry. */
export function createRedisIdempotencyStore(client: Redis, prefix: string): IdempotencyStore {
  const key = (id: string) => `${prefix}:idempotency:${id}`
  const get = async (id: string) => {
    const text = await client.get(key(id))
    return text ? (JSON.parse(text) as IdempotencyEntry) : undefined
  }
  return {
    async claim(id, fingerprint, ttlMs) {
      const entry: IdempotencyEntry = { fingerprint, expiresAt: Date.now() + ttlMs }
      const set = await client.set(key(id), JSON.stringify(entry), 'PX', ttlMs, 'NX')
      // Gone between the SET and the GET (expired just then): the next attempt claims it.
      return set === 'OK' ? undefined : ((await get(id)) ?? { fingerprint: '', expiresAt: 0 })
    },
    async renew(id, ttlMs) {
      await client.pexpire(key(id), ttlMs)
    },
    async complete(id, entry) {
      await client.set(key(id), JSON.stringify(entry), 'PXAT', entry.expiresAt)
    },
    async release(id) {
      await client.del(key(id))
    },
    get,
  }
}

/**
 * Keys among the records of a one-process deployment (the local queue): claims in flight are held
 * in memory, which is atomic there because this process is the only one taking submits; answered
 * keys are records, so they outlive a restart. An expired record counts as absent.
 */
export function createRecordsIdempotencyStore(records: Storage): IdempotencyStore {
  const inFlight = new Map<string, IdempotencyEntry>()
  const itemKey = (id: string) => `idempotency:${id}`
  const stored = async (id: string) => {
    const entry = await records.getItem<IdempotencyEntry>(itemKey(id))
    return entry && typeof entry === 'object' && entry.expiresAt > Date.now() ? entry : undefined
  }
  return {
    async claim(id, fingerprint, ttlMs) {
      const held = inFlight.get(id)
      if (held) return held
      // Held before the read, so a second request arriving meanwhile sees it.
      const claim: IdempotencyEntry = { fingerprint, expiresAt: Date.now() + ttlMs }
      inFlight.set(id, claim)
      const existing = await stored(id).catch((error: unknown) => {
        inFlight.delete(id)
        throw error
      })
      if (existing) inFlight.delete(id)
      return existing
    },
    // A claim here lives as long as its handler does: it is in this process's memory, gone with it.
    renew: async () => undefined,
    async complete(id, entry) {
      try {
        await records.setItem(itemKey(id), entry)
      } finally {
        inFlight.delete(id)
      }
    },
    async release(id) {
      inFlight.delete(id)
    },
    get: async (id) => inFlight.get(id) ?? stored(id),
  }
}
