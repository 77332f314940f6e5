/**
 * Waits for `work`, or rejects with `message` once `ms` have passed; the timer is cleared either
 * way. For waits on something outside the process (Redis, storage) that may never answer.
 *
 * ```ts
 * await withTimeout(queue.waitUntilReady(), 10_000, 'cannot reach the queue')
 * ```
 */
export async function withTimeout<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms)
  })
  try {
    return await Promise.race([work, late])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Waits for `work` at most `ms`: true when it settled (either way) in time, false otherwise; never
 * rejects. For bounded waits on our own work (a drain's requests in flight, the handlers it cut).
 *
 * ```ts
 * if (!(await settlesWithin(server.drained(), graceMs))) cutTheRest()
 * ```
 */
export function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  const settled = work.then(
    () => true,
    () => true,
  )
  return withTimeout(settled, ms, 'not settled in time').catch(() => false)
}
