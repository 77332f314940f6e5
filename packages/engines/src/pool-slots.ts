/**
 * The pool's own queue: at most `size` jobs hold a slot (one per thread); the rest wait here, in
 * order, not in piscina. A thread that retires (thread-recycling.ts) ends with its job still open
 * in piscina, and piscina replaces an ended thread only up to `minThreads`, so jobs queued inside
 * piscina behind it could wait for a thread nobody starts. A slot is freed once the retired thread
 * has ended; the next job then finds a thread missing and piscina starts one for it.
 */
export interface PoolSlots {
  /** Resolves true once the job holds a slot; false when `signal` aborts first or the slots are closed. */
  acquire(signal: AbortSignal | undefined): Promise<boolean>
  /** Gives a held slot to the next job waiting. */
  release(): void
  /** Jobs holding a slot. */
  readonly running: number
  /** Jobs waiting for a slot. */
  readonly waiting: number
  /** True once closed: every later `acquire` is refused. */
  readonly closed: boolean
  /** Refuses the jobs waiting and every later one. */
  close(): void
}

export function createPoolSlots(size: number): PoolSlots {
  const waiting: ((granted: boolean) => void)[] = []
  let running = 0
  let closed = false
  return {
    acquire: (signal) =>
      new Promise<boolean>((resolve) => {
        if (signal?.aborted || closed) return resolve(false)
        if (running < size) {
          running++
          return resolve(true)
        }
        const answer = (granted: boolean) => {
          signal?.removeEventListener('abort', cancel)
          if (granted) running++
          resolve(granted)
        }
        const cancel = () => {
          const index = waiting.indexOf(answer)
          if (index >= 0) waiting.splice(index, 1)
          resolve(false)
        }
        signal?.addEventListener('abort', cancel, { once: true })
        waiting.push(answer)
      }),
    release() {
      running--
      waiting.shift()?.(true)
    },
    get running() {
      return running
    },
    get waiting() {
      return waiting.length
    },
    get closed() {
      return closed
    },
    close() {
      closed = true
      for (const answer of waiting.splice(0)) answer(false)
    },
  }
}
