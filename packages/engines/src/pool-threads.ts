import { fileURLToPath } from 'node:url'
import { Piscina } from 'piscina'
import type { EnginePoolOptions } from './pool.ts'

/** What every thread of the pool loads: the entry piscina requires, and the worker module that entry imports. */
export const threadEntry = {
  /** CommonJS, so that ending a thread while it loads is safe (the file says why). */
  filename: fileURLToPath(new URL('./thread-entry.cjs', import.meta.url)),
  /**
   * The worker beside this module: compiled (dist/pool.js), the compiled worker, run by plain Node with
   * no hook; from source (tests, `npm run dev`), the TypeScript worker.
   */
  workerModule: new URL(import.meta.url.endsWith('.ts') ? './worker.ts' : './worker.js', import.meta.url).href,
}

/**
 * The pool's threads (one piscina), swapped for fresh ones after `idleRecycleMs` with no job, so an
 * idle service holds what it held at start-up, not what its largest input made its threads grow to.
 */
export interface PoolThreads {
  /** The piscina to run the next job on (idle recycling replaces it). */
  readonly piscina: Piscina
  /** A job begins: no idle recycling until every job has ended. */
  jobStarted(): void
  /** A job has ended; the last one to end starts the idle count. */
  jobEnded(): void
  /** A thread retired after its job (thread-recycling.ts) and was replaced. */
  countRecycled(): void
  status(): { liveThreads: number; recycledThreads: number }
  destroy(): Promise<void>
}

type PoolThreadsOptions = Required<Omit<EnginePoolOptions, 'onLog'>> & Pick<EnginePoolOptions, 'onLog'>

export function createPoolThreads(o: PoolThreadsOptions): PoolThreads {
  let piscina = startPiscina(o)
  let inFlight = 0
  let recycledThreads = 0
  let destroyed = false
  // Jobs run since the current threads started: only threads that did work are worth replacing.
  let jobsSinceFresh = 0
  let idleTimer: ReturnType<typeof setTimeout> | undefined

  /**
   * Idle recycling swaps in a new piscina: with no job in flight nothing can be handed to a thread
   * that is ending, so this needs no coordination with `run` (the old pool is simply destroyed).
   */
  const recycleIdle = () => {
    idleTimer = undefined
    if (destroyed || inFlight > 0 || jobsSinceFresh === 0) return
    const old = piscina
    const replaced = old.threads.length
    piscina = startPiscina(o)
    jobsSinceFresh = 0
    recycledThreads += replaced
    void old.destroy().catch(() => undefined)
    o.onLog?.({ level: 'info', message: 'engine threads recycled (idle)', fields: { threads: replaced, idleMs: o.idleRecycleMs } })
  }

  return {
    get piscina() {
      return piscina
    },
    jobStarted() {
      clearTimeout(idleTimer)
      inFlight++
      jobsSinceFresh++
    },
    jobEnded() {
      inFlight--
      if (inFlight === 0 && o.idleRecycleMs > 0 && !destroyed) {
        idleTimer = setTimeout(recycleIdle, o.idleRecycleMs)
        idleTimer.unref()
      }
    },
    countRecycled: () => void recycledThreads++,
    status: () => ({ liveThreads: piscina.threads.length, recycledThreads }),
    async destroy() {
      destroyed = true
      clearTimeout(idleTimer)
      await piscina.destroy()
    },
  }
}

/** A piscina of the pool's threads, one job per thread at a time. */
function startPiscina(o: PoolThreadsOptions): Piscina {
  return new Piscina({
    filename: threadEntry.filename,
    // The handler piscina looks up when it preloads a thread, the same one every job names.
    name: 'runEngineJob',
    minThreads: o.prestart ? o.threads : 0,
    maxThreads: o.threads,
    idleTimeout: o.idleTimeoutMs,
    concurrentTasksPerWorker: 1,
    resourceLimits: { maxOldGenerationSizeMb: o.maxHeapMb },
    // Workers size their image threads (sharp, texture concurrency) by their share of the cores.
    workerData: { threads: o.threads, recycling: o.recycling, workerModule: o.workerModule },
  })
}
