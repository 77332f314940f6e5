import { availableParallelism } from 'node:os'
import { fileURLToPath } from 'node:url'
import { MessageChannel, type TransferListItem } from 'node:worker_threads'
import { Piscina } from 'piscina'
import type { EngineJob, JobResult, ProgressMessage } from './jobs.ts'

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
      port1.on('message', (message: ProgressMessage) => runOptions.onProgress?.(message.progress))
      const transferList: TransferListItem[] = [port2]
      if ('bytes' in job.input) transferList.push(job.input.bytes.buffer as ArrayBuffer)
      inFlight++
      try {
        return (await piscina.run(
          { ...job, port: port2 },
          { name: job.name, transferList, ...(runOptions.signal ? { signal: runOptions.signal } : {}) },
        )) as JobResult
      } catch (error) {
        return { ok: false, message: threadFailureMessage(error) }
      } finally {
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

function threadFailureMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  if (/out of memory|ERR_WORKER_OUT_OF_MEMORY/i.test(message)) return 'engine ran out of memory on this input'
  if (/abort/i.test(message)) return 'cancelled'
  return `engine thread failed: ${message}`
}
