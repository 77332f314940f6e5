import { EXTENSION_ERROR_TEXTS } from './contract/index.ts'
import { APIError, ConnectionError, TimeoutError } from './errors.ts'
import { retryAfterMs } from './retry-after.ts'

/** Backoff settings of the retry loop. */
export interface RetryPolicy {
  /** Delay before the first retry, in ms; doubles on each further retry. */
  initialDelayMs: number
  /** Ceiling of the exponential backoff, in ms. */
  maxDelayMs: number
  /** A server's `Retry-After` / `X-RateLimit-Reset` is honoured up to this wait, in ms; beyond it the backoff applies. */
  maxServerDelayMs: number
}

export const RETRY_DEFAULTS: RetryPolicy = {
  initialDelayMs: 500,
  maxDelayMs: 8_000,
  maxServerDelayMs: 60_000,
}

/**
 * Whether a failed attempt may be repeated. GET is idempotent, and so is a submit carrying an
 * Idempotency-Key (`idempotent`): connection errors, time-outs, 429 and 5xx (except 501, which is
 * permanent) are retried. Any other POST creates a task, so it is retried only when the server
 * certainly did not act on it: a 429 (refused before any work) or a refused connection
 * (`ECONNREFUSED`: the request never reached a handler). A submit with an Idempotency-Key answered
 * 409 because the first request with that key is still being handled (a retry after a time-out
 * that overlaps it) is retried too: that request will answer, and the retry then gets its task;
 * every other 409 is final. Caller aborts are never retried.
 */
export function isRetryable(method: string, error: unknown, idempotent = method.toUpperCase() === 'GET'): boolean {
  if (error instanceof APIError) {
    if (error.status === 429) return true
    if (error.status === 409) return idempotent && isKeyInFlight(error)
    return idempotent && error.status >= 500 && error.status !== 501
  }
  if (error instanceof ConnectionError) return idempotent || error.code === 'ECONNREFUSED'
  if (error instanceof TimeoutError) return idempotent
  return false
}

/** The server's 409 for an Idempotency-Key whose first request is still being handled, told by the contract's text. */
function isKeyInFlight(error: APIError): boolean {
  const body = error.body as { error?: unknown } | null
  return typeof body === 'object' && body !== null && body.error === EXTENSION_ERROR_TEXTS.idempotencyKeyInFlight()
}

/**
 * The wait before retry number `retry` (0 for the first). A server hint wins when it is sane:
 * `Retry-After` (seconds or an HTTP date), then `X-RateLimit-Reset` (integer Unix seconds, the
 * contract's 2.8). Otherwise exponential backoff with up to 25 % jitter below the step, so clients
 * that failed together do not come back together.
 * @example retryDelayMs(0, new Headers({ 'retry-after': '2' })) // 2000
 */
export function retryDelayMs(
  retry: number,
  headers: Headers | undefined,
  policy: RetryPolicy = RETRY_DEFAULTS,
  now: number = Date.now(),
  random: () => number = Math.random,
): number {
  const hinted = headers ? retryAfterMs(headers, now) : undefined
  if (hinted !== undefined && hinted >= 0 && hinted <= policy.maxServerDelayMs) return hinted
  const step = Math.min(policy.initialDelayMs * 2 ** retry, policy.maxDelayMs)
  return Math.round(step * (1 - random() * 0.25))
}
