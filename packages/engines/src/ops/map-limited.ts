/**
 * Maps items through an async function, at most `limit` at a time, keeping the order of results.
 * The first failure rejects after the running calls settle, so no work is left in flight.
 */
export async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length)
  let next = 0
  let failure: { error: unknown } | undefined
  const lane = async () => {
    while (!failure && next < items.length) {
      const index = next++
      try {
        results[index] = await fn(items[index]!, index)
      } catch (error) {
        failure ??= { error }
      }
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane))
  if (failure) throw failure.error
  return results
}
