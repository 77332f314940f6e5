import { createRequire } from 'node:module'
import type * as BullMQ from 'bullmq'
import type * as IORedis from 'ioredis'

/**
 * Libraries that only some deployments use, loaded on first use instead of at import: ioredis and
 * BullMQ cost ~0.4 s and ~0.6 s of start-up on these 2-core machines (measured by importing each
 * alone), while the default deployment (fs storage, local queue) never opens a Redis connection.
 * Both ship CommonJS builds, so a synchronous `require` keeps the factories that use them synchronous.
 */
const requireLazily = createRequire(import.meta.url)

/** BullMQ (the shared queue), loaded on the first call. */
export function loadBullMQ(): typeof BullMQ {
  return requireLazily('bullmq') as typeof BullMQ
}

/** ioredis (every Redis connection), loaded on the first call. */
export function loadIORedis(): typeof IORedis {
  return requireLazily('ioredis') as typeof IORedis
}
