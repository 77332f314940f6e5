import { availableParallelism } from 'node:os'
import { fileURLToPath } from 'node:url'
import { MessageChannel, type TransferListItem } from 'node:worker_threads'
import { Piscina } from 'piscina'
import { stackOverflowMessage } from './errors.ts'
import type { EngineJob, EngineLogEntry, JobResult, PortMessage } from './jobs.ts'
import type { ThreadRecyclingOptions } from './thread-recycling.ts'
import { workBudgetMessage } from './work-budget.ts'

export interface EnginePoolOptions {
  /** Worker threads; each runs one job at a time. */
  threads?: number
  /** Heap cap per worker (MB); a job past it kills only its thread and fails with a reason. */
  maxHeapMb?: number
  /** Threads idle this long are stopped (and restarted on demand). */
  idleTimeoutMs?: number
  /**
   * Start every thread now and keep it: the first jobs then do not pay for loading the worker and
   * its codecs (a few hundred ms per thread). Off, threads start on demand and stop when idle.
   */
  prestart?: boolean
  /** When a thread is replaced by a fresh one (after N jobs, above a memory figure); see thread-recycling.ts. */
  recycling?: ThreadRecyclingOptions
  /**
   * After this long with no job, threads that ran jobs are replaced by fresh ones (0: never), so an
   * idle service holds what it held at start-up, not what its largest input made its threads grow to.
   */
  idleRecycleMs?: number
  /** Hears the pool's own events (idle recycling), for the service's log. */
  onLog?: (entry: EngineLogEntry) => void
}

export const ENGINE_POOL_DEFAULTS: Required<Omit<EnginePoolOptions, 'onLog'>> = {
  threads: availableParallelism(),
  maxHeapMb: 4096,
  idleTimeoutMs: 60_000,
  prestart: false,
  recycling: {},
  idleRecycleMs: 0,
}

export interface RunOptions {
  onProgress?: (progress: number) => void
  /** Log lines the job's thread writes (warnings, its retirement), to be logged with the task's fields. */
  onLog?: (entry: EngineLogEntry) => void
  signal?: AbortSignal
  /**
   * Most milliseconds the job may hold its thread, counted from when a thread starts it (time in
   * the queue does not count). Past it the thread is stopped and replaced, and the job fails with
   * the work-budget message. See `workBudgetMs`.
   */
  budgetMs?: number
}

export interface EnginePool {
  /** Runs a job; never rejects: every failure, including a crashed thread, is a `{ ok: false }` result. */
  run(job: EngineJob, options?: RunOptions): Promise<JobResult>
  /** Jobs running now. */
  readonly active: number
  /** Jobs waiting for a thread. */
  readonly queued: number
  readonly threads: number
  /** Threads running now (started and not ended), and how many were replaced by fresh ones so far. */
  status(): { liveThreads: number; recycledThreads: number; destroyed: boolean }
  destroy(): Promise<void>
}

/**
 * The thread entry beside this module. Compiled (dist/pool.js) it is the compiled worker, loaded by
 * plain Node with no hook; from source (tests, `npm run dev`) it is worker-entry.mjs, which loads the
 * TypeScript worker through tsx, since Node 20 carries no loader hooks into worker threads.
 */
const WORKER_FILE = import.meta.url.endsWith('.ts')
  ? new URL('./worker-entry.mjs', import.meta.url)
  : new URL('./worker.js', import.meta.url)

/**
 * Creates the thread pool that runs every engine job off the event loop.
 *
 * ```ts
 * const pool = createEnginePool({ threads: 2 })
 * const result = await pool.run({ name: 'compress', input: { path }, format: 'glb', options: { engine: 'draco' } })
 * ```
 */
export function createEnginePool(options: EnginePoolOptions = {}): EnginePool {
  const o = { ...ENGINE_POOL_DEFAULTS, ...options }
  const createPiscina = () =>
    new Piscina({
      filename: fileURLToPath(WORKER_FILE),
      minThreads: o.prestart ? o.threads : 0,
      maxThreads: o.threads,
      idleTimeout: o.idleTimeoutMs,
      concurrentTasksPerWorker: 1,
      resourceLimits: { maxOldGenerationSizeMb: o.maxHeapMb },
      // Workers size their image threads (sharp, texture concurrency) by their share of the cores.
      workerData: { threads: o.threads, recycling: o.recycling },
    })
  let piscina = createPiscina()

  /**
   * Jobs wait here, not in piscina: piscina gets at most one job per thread. A thread that retires
   * (thread-recycling.ts) ends with its job still open in piscina, and piscina replaces an ended
   * thread only up to `minThreads`, so jobs queued inside piscina behind it could wait for a thread
   * nobody starts. A slot is freed once the retired thread has ended; the next job then finds a
   * thread missing and piscina starts one for it.
   */
  const waiting: ((granted: boolean) => void)[] = []
  let running = 0
  const acquire = (signal: AbortSignal | undefined) =>
    new Promise<boolean>((resolve) => {
      if (signal?.aborted || destroyed) return resolve(false)
      if (running < o.threads) {
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
    })
  const release = () => {
    running--
    waiting.shift()?.(true)
  }

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
    piscina = createPiscina()
    jobsSinceFresh = 0
    recycledThreads += replaced
    void old.destroy().catch(() => undefined)
    o.onLog?.({ level: 'info', message: 'engine threads recycled (idle)', fields: { threads: replaced, idleMs: o.idleRecycleMs } })
  }

  return {
    async run(job, runOptions = {}) {
      clearTimeout(idleTimer)
      const { port1, port2 } = new MessageChannel()
      const { budgetMs } = runOptions
      const budget = budgetMs !== undefined ? new AbortController() : undefined
      let budgetTimer: ReturnType<typeof setTimeout> | undefined
      // A thread that retires after this job sends its result on the port, then ends (worker.ts).
      let final: ((result: JobResult) => void) | undefined
      const finalResult = new Promise<JobResult>((resolve) => (final = resolve))
      port1.on('message', (message: PortMessage) => {
        // The worker's first message says a thread has taken the job: its budget starts now.
        if (budget && !budgetTimer) budgetTimer = setTimeout(() => budget.abort(), budgetMs)
        if ('progress' in message) runOptions.onProgress?.(message.progress)
        else if ('log' in message) runOptions.onLog?.(message.log)
        else if ('final' in message) {
          recycledThreads++
          runOptions.onLog?.({ level: 'info', message: 'engine thread recycled', fields: { ...message.retiring } })
          port1.postMessage('received')
          final?.(message.final)
        }
      })
      const transferList: TransferListItem[] = [port2]
      if ('bytes' in job.input) transferList.push(job.input.bytes.buffer as ArrayBuffer)
      const signals = [runOptions.signal, budget?.signal].filter((signal): signal is AbortSignal => signal !== undefined)
      const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0]
      inFlight++
      jobsSinceFresh++
      let slot = false
      try {
        slot = await acquire(runOptions.signal)
        if (!slot) return { ok: false, message: destroyed ? 'the engine pool is stopped' : 'cancelled' }
        const returned = piscina.run(
          { ...job, port: port2 },
          { name: 'runEngineJob', transferList, ...(signal ? { signal } : {}) },
        ) as Promise<JobResult>
        // A retiring thread's task ends in piscina with "worker exited" once the thread has ended:
        // its result came on the port, and its slot is freed only after that end (see `acquire`).
        const outcome = returned.then(
          (result) => ({ result }),
          (error: unknown) => ({ error }),
        )
        const first = await Promise.race([outcome, finalResult.then((final) => ({ final }))])
        if ('final' in first) {
          await Promise.race([outcome, new Promise((resolve) => setTimeout(resolve, 10_000).unref())])
          return first.final
        }
        if ('error' in first) throw first.error
        return first.result
      } catch (error) {
        if (budget?.signal.aborted && !runOptions.signal?.aborted) return { ok: false, message: workBudgetMessage(budgetMs!) }
        return { ok: false, message: threadFailureMessage(error) }
      } finally {
        clearTimeout(budgetTimer)
        if (slot) release()
        inFlight--
        port1.close()
        if (inFlight === 0 && o.idleRecycleMs > 0 && !destroyed) {
          idleTimer = setTimeout(recycleIdle, o.idleRecycleMs)
          idleTimer.unref()
        }
      }
    },
    get active() {
      return running
    },
    get queued() {
      return waiting.length
    },
    threads: o.threads,
    status() {
      return { liveThreads: piscina.threads.length, recycledThreads, destroyed }
    },
    async destroy() {
      destroyed = true
      clearTimeout(idleTimer)
      // Jobs still waiting for a thread fail, as piscina fails the ones it holds.
      for (const answer of waiting.splice(0)) answer(false)
      await piscina.destroy()
    },
  }
}

/**
 * The failure of a job whose thread ended under it. What reaches a task names the input's problem
 * (memory, nesting), never the thread's internals; an unknown cause says only that the input
 * stopped the engine, since it is the input that did (every job runs in its own thread).
 */
export function threadFailureMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  if (/out of memory|ERR_WORKER_OUT_OF_MEMORY/i.test(message)) return 'the input needed more memory than an engine thread may use'
  if (/stack overflow|maximum call stack/i.test(message)) return stackOverflowMessage
  if (/abort/i.test(message)) return 'cancelled'
  return 'the input could not be processed: the engine stopped on it'
}
