/**
 * When an engine thread should be replaced by a fresh one. The codecs' WASM memories (draco,
 * meshopt, basis, assimp) grow to the largest input the thread has seen and never shrink, and V8
 * keeps the old generation it grew to; only ending the thread gives that memory back.
 */
export interface ThreadRecyclingOptions {
  /** Jobs after which the thread retires (0: never). */
  afterJobs?: number
  /** Thread memory (V8 heap + external, which holds the WASM memories), in MB, above which it retires after a job (0: never). */
  aboveMb?: number
}

/** The library's own default is never to retire; the service sets its own (SERVICE__ENGINES__RECYCLE_*). */
const THREAD_RECYCLING_DEFAULTS: Required<ThreadRecyclingOptions> = {
  afterJobs: 0,
  aboveMb: 0,
}

/** Why a thread retires, with its figures. */
export interface Retirement {
  reason: string
  jobs: number
  memoryMb: number
}

/**
 * This thread's own memory in MB: its V8 heap plus external memory (array buffers and WASM
 * memories). In a worker thread these figures are the thread's isolate's, not the process's.
 */
export function threadMemoryMb(): number {
  const usage = process.memoryUsage()
  return Math.round((usage.heapTotal + usage.external) / 2 ** 20)
}

/**
 * Counts a thread's jobs and says, after each, whether the thread should retire.
 *
 * ```ts
 * const recycling = createThreadRecycling({ afterJobs: 100, aboveMb: 512 })
 * const retirement = recycling.afterJob() // undefined: keep going
 * ```
 */
export function createThreadRecycling(options: ThreadRecyclingOptions = {}) {
  const o = { ...THREAD_RECYCLING_DEFAULTS, ...options }
  let jobs = 0
  return {
    afterJob(): Retirement | undefined {
      jobs++
      if (o.afterJobs > 0 && jobs >= o.afterJobs) return { reason: `ran ${jobs} jobs`, jobs, memoryMb: threadMemoryMb() }
      if (o.aboveMb > 0) {
        const memoryMb = threadMemoryMb()
        if (memoryMb > o.aboveMb) return { reason: `holds ${memoryMb} MB (over ${o.aboveMb} MB)`, jobs, memoryMb }
      }
      return undefined
    },
  }
}
