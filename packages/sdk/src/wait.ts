import { TimeoutError, UserAbortError } from './errors.ts'

/** Options of `waitForTask` / `waitForBatch`. */
export interface WaitOptions<T> {
  /** Stops waiting; the wait then rejects with `UserAbortError`. The task itself keeps running. */
  signal?: AbortSignal
  /** Gives up after this many ms with `TimeoutError`. Default: no limit. */
  timeoutMs?: number
  /** Called with each record whose status or progress differs from the previous one. */
  onProgress?: (record: T) => void
  /** Pause between polls, in ms. */
  pollIntervalMs?: number
}

export const WAIT_DEFAULTS = {
  pollIntervalMs: 500,
} as const

/**
 * Resolves after `ms`, or rejects with `UserAbortError` as soon as `signal` fires.
 * @example await sleep(250, controller.signal)
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new UserAbortError(undefined, { cause: signal.reason }))
    const onAbort = () => {
      clearTimeout(timer)
      reject(new UserAbortError(undefined, { cause: signal?.reason }))
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/** How to poll one kind of record. */
export interface PollTarget<T> {
  /** Human name for messages, e.g. `task 1f3…`. */
  label: string
  fetch: (signal: AbortSignal) => Promise<T>
  isDone: (record: T) => boolean
  /** What counts as a change worth an `onProgress` call. */
  fingerprint: (record: T) => string
  /** The pause before the next fetch, when the target decides it (0 for a fetch that itself waits: a long poll). */
  pauseMs?: () => number | undefined
}

/**
 * Polls until `isDone`, reporting changes. The time limit also cuts an in-flight request short, so
 * `timeoutMs` is a real upper bound (plus one request's set-up).
 */
export async function poll<T>(target: PollTarget<T>, options: WaitOptions<T> = {}): Promise<T> {
  const interval = options.pollIntervalMs ?? WAIT_DEFAULTS.pollIntervalMs
  const controller = new AbortController()
  const forwardAbort = () => controller.abort(options.signal?.reason)
  if (options.signal?.aborted) throw new UserAbortError(undefined, { cause: options.signal.reason })
  options.signal?.addEventListener('abort', forwardAbort, { once: true })
  let expired = false
  const timer =
    options.timeoutMs !== undefined && options.timeoutMs > 0
      ? setTimeout(() => {
          expired = true
          controller.abort()
        }, options.timeoutMs)
      : undefined
  try {
    let previous: string | undefined
    for (;;) {
      const record = await target.fetch(controller.signal)
      const fingerprint = target.fingerprint(record)
      if (fingerprint !== previous) options.onProgress?.(record)
      previous = fingerprint
      if (target.isDone(record)) return record
      const pause = target.pauseMs?.() ?? interval
      if (pause > 0) await sleep(pause, controller.signal)
    }
  } catch (error) {
    if (expired && error instanceof UserAbortError) {
      throw new TimeoutError(`${target.label} not finished after ${options.timeoutMs} ms`)
    }
    throw error
  } finally {
    clearTimeout(timer)
    options.signal?.removeEventListener('abort', forwardAbort)
  }
}
