/** How a failing storage call of a run is retried: with doubling waits, for a bounded time. */
export interface StoreRetryPolicy {
  /** How long a failing call is retried before its error is thrown (ms). */
  retryMs?: number
  /** The first wait between two attempts (ms); each next wait doubles, up to `maxWaitMs`. */
  firstWaitMs?: number
  maxWaitMs?: number
  /** True while the process is stopping: a failed call is not retried then. */
  stopping?: () => boolean
  /** Told of each retry: why the call failed and the wait before the next attempt. */
  onRetry?: (error: unknown, waitMs: number) => void
}

export const STORE_RETRY_DEFAULTS = { retryMs: 5 * 60_000, firstWaitMs: 250, maxWaitMs: 15_000 }

/**
 * Calls `operation` until it succeeds, `isFinal` says its error is an answer rather than an outage,
 * or the policy's time is up. A run's storage calls are idempotent (reads, writes under fixed keys),
 * so calling again is safe; and a store that is away for a few seconds (Redis restarting, S3
 * unreachable) must delay a task, not fail it, since the task's input is fine.
 */
export async function retryStoreCall<T>(
  operation: () => Promise<T>,
  policy: StoreRetryPolicy,
  isFinal: (error: unknown) => boolean = () => false,
): Promise<T> {
  const retryMs = policy.retryMs ?? STORE_RETRY_DEFAULTS.retryMs
  const maxWait = policy.maxWaitMs ?? STORE_RETRY_DEFAULTS.maxWaitMs
  const giveUpAt = Date.now() + retryMs
  for (let wait = policy.firstWaitMs ?? STORE_RETRY_DEFAULTS.firstWaitMs; ; wait = Math.min(wait * 2, maxWait)) {
    try {
      return await operation()
    } catch (error) {
      if (isFinal(error) || Date.now() + wait > giveUpAt || policy.stopping?.()) throw error
      policy.onRetry?.(error, wait)
      await new Promise((resolve) => setTimeout(resolve, wait))
    }
  }
}
