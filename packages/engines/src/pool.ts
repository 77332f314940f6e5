import { availableParallelism } from 'node:os'
import { fileURLToPath } from 'node:url'
import { MessageChannel, type TransferListItem } from 'node:worker_threads'
import { Piscina } from 'piscina'
import { stackOverflowMessage } from './errors.ts'
import type { EngineJob, JobResult, ProgressMessage } from './jobs.ts'
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
}

export const ENGINE_POOL_DEFAULTS: Required<EnginePoolOptions> = {
  threads: availableParallelism(),
  maxHeapMb: 4096,
  idleTimeoutMs: 60_000,
  prestart: false,
}

export interface RunOptions {
  onProgress?: (progress: number) => void
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
  destroy(): Promise<void>
}

/**
 * The thread entry beside this module. Compiled (dist/pool.js) it is the compiled worker, loaded by
 * plain Node with no hook; from source (tests, `npm run dev`) it is worker-entry.mjs, which loads the
 * TypeScript worker through tsx, since Node 20 carries no loader hooks into worker threads.
 */
const WORKER_FILE = import.meta.url.endsWith('.ts') ? new URL('./worker-entry.mjs', import.meta.url) : new URL('./worker.js', import.meta.url)

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
  const piscina = new Piscina({
    filename: fileURLToPath(WORKER_FILE),
    minThreads: o.prestart ? o.threads : 0,
    maxThreads: o.threads,
    idleTimeout: o.idleTimeoutMs,
    concurrentTasksPerWorker: 1,
    resourceLimits: { maxOldGenerationSizeMb: o.maxHeapMb },
    // Workers size their image threads (sharp, texture concurrency) by their share of the cores.
    workerData: { threads: o.threads },
  })

  let inFlight = 0
  return {
    async run(job, runOptions = {}) {
      const { port1, port2 } = new MessageChannel()
      const { budgetMs } = runOptions
      const budget = budgetMs !== undefined ? new AbortController() : undefined
      let budgetTimer: ReturnType<typeof setTimeout> | undefined
      port1.on('message', (message: ProgressMessage) => {
        // The worker's first message says a thread has taken the job: its budget starts now.
        if (budget && !budgetTimer) budgetTimer = setTimeout(() => budget.abort(), budgetMs)
        runOptions.onProgress?.(message.progress)
      })
      const transferList: TransferListItem[] = [port2]
      if ('bytes' in job.input) transferList.push(job.input.bytes.buffer as ArrayBuffer)
      const signals = [runOptions.signal, budget?.signal].filter((signal): signal is AbortSignal => signal !== undefined)
      const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0]
      inFlight++
      try {
        return (await piscina.run({ ...job, port: port2 }, { name: job.name, transferList, ...(signal ? { signal } : {}) })) as JobResult
      } catch (error) {
        if (budget?.signal.aborted && !runOptions.signal?.aborted) return { ok: false, message: workBudgetMessage(budgetMs!) }
        return { ok: false, message: threadFailureMessage(error) }
      } finally {
        clearTimeout(budgetTimer)
        inFlight--
        port1.close()
      }
    },
    get active() {
      return Math.max(0, Math.min(o.threads, inFlight - piscina.queueSize))
    },
    get queued() {
      return piscina.queueSize
    },
    threads: o.threads,
    async destroy() {
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
