import * as BullMQ from 'bullmq'
import * as IORedis from 'ioredis'

/**
 * `src/lazy-modules.ts` in a Worker bundle: ioredis and BullMQ bundled in, since a Worker has no
 * node_modules to `require` them from at run time (workerd's `nodejs_compat` gives them the
 * node:net sockets, node:events and node:crypto they use). Loading them at start costs a Worker
 * nothing the bundle has not already paid.
 */
export function loadBullMQ(): typeof BullMQ {
  return BullMQ
}

/** ioredis, bundled. */
export function loadIORedis(): typeof IORedis {
  return IORedis
}
