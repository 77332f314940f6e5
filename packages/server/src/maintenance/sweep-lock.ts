import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'

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
export function createRedisLock(url: string, prefix: string): SweepLock {
  const client = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true })
  client.on('error', () => undefined) // reported by the sweep that fails
  const token = randomUUID()
  return {
    async acquire(name, ttlMs) {
      if (client.status === 'wait') await client.connect()
      const key = `${prefix}:lock:${name}`
      if ((await client.set(key, token, 'PX', ttlMs, 'NX')) === 'OK') return true
      // Still ours from the last round: extend it.
      if ((await client.get(key)) === token) {
        await client.pexpire(key, ttlMs)
        return true
      }
      return false
    },
    async close() {
      client.disconnect()
    },
  }
}
