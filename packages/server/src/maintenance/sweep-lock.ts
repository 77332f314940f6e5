import type { Redis } from 'ioredis'

/** Lets one process of many do a periodic job; the others skip that round. */
export interface SweepLock {
  /** True when this process holds `name` for the next `ttlMs` (taken now, or still ours). */
  acquire(name: string, ttlMs: number): Promise<boolean>
  close(): Promise<void>
}

/** For a single process (or storage without Redis): always granted; the sweep's deletes are idempotent anyway. */
export function createLocalLock(): SweepLock {
  return { acquire: async () => true, close: async () => undefined }
}

/**
 * A Redis lease (`SET key token NX PX ttl`): among several API and worker processes only one sweeps
 * per round. Losing it to a crash only delays the next sweep by `ttlMs`.
 */
export function createRedisLock(client: Redis, prefix: string): SweepLock {
  const token = crypto.randomUUID()
  return {
    async acquire(name, ttlMs) {
      const key = `${prefix}:lock:${name}`
      if ((await client.set(key, token, 'PX', ttlMs, 'NX')) === 'OK') return true
      // Still ours from the last round: extend it.
      if ((await client.get(key)) === token) {
        await client.pexpire(key, ttlMs)
        return true
      }
      return false
    },
    // The connection is the process's and closes with it.
    close: async () => undefined,
  }
}
