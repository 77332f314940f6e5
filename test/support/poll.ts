/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Reads until `done` holds or `timeoutMs` passes, `intervalMs` apart, and returns the last value read:
 * the caller's assertion on it then says what was seen, which a bare time-out could not.
 */
export async function until<T>(read: () => T | Promise<T>, done: (value: T) => boolean, timeoutMs: number, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (done(value) || Date.now() > deadline) return value
    await sleep(intervalMs)
  }
}
