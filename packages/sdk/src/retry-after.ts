/**
 * How long the server asks to wait, in ms, from `Retry-After` (seconds or an HTTP date), else
 * `X-RateLimit-Reset` (integer Unix seconds, the contract's 2.8). Undefined when it says nothing usable.
 * @example retryAfterMs(new Headers({ 'retry-after': '2' })) // 2000
 */
export function retryAfterMs(headers: Headers, now: number = Date.now()): number | undefined {
  const retryAfter = headers.get('retry-after')?.trim()
  if (retryAfter) {
    if (/^\d+(\.\d+)?$/.test(retryAfter)) return Math.ceil(Number(retryAfter) * 1000)
    const date = Date.parse(retryAfter)
    if (!Number.isNaN(date)) return Math.max(0, date - now)
  }
  const reset = headers.get('x-ratelimit-reset')?.trim()
  if (reset && /^\d+$/.test(reset)) return Math.max(0, Number(reset) * 1000 - now)
  return undefined
}
