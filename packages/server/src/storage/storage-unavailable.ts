import { RedisUnreachableError } from '../redis/redis-unreachable.ts'
import { FsStoreError } from './fs-store-error.ts'
import { S3Error } from './s3-request.ts'

/**
 * What a client is told when a store failed under its request. The store's own words name our
 * hosts, ports and key layout; they go to the request's log line (request-log.ts), never the wire.
 */
export const STORAGE_UNAVAILABLE_TEXT = 'storage unavailable, try again'
export const STORAGE_FAILED_TEXT = 'storage failed; the service log has the cause'

/** The wait the answer for a store away asks for (Retry-After): Redis reconnects and S3 retries within a few seconds. */
export const STORAGE_RETRY_AFTER_SECONDS = 5

/**
 * How a store failed: `unavailable` when it could not be reached or answered 429/5xx (worth retrying),
 * else `failed` (an S3 refusal, a file system that refused a call: read-only, no permission, I/O error).
 */
export type StorageFailure = 'unavailable' | 'failed'

/** Whether `error`, or an error it wraps (h3 and streams wrap theirs), is a store failing, and how. */
export function storageFailureOf(error: unknown): StorageFailure | undefined {
  for (let current = error, depth = 0; current && depth < 8; depth++) {
    if (current instanceof RedisUnreachableError) return 'unavailable'
    if (current instanceof FsStoreError) return 'failed'
    if (current instanceof S3Error)
      return current.status === 0 || current.status === 429 || current.status >= 500 ? 'unavailable' : 'failed'
    if (typeof current !== 'object') return undefined
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}
