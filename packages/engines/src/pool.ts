import { availableParallelism } from 'node:os'
import { MessageChannel, type TransferListItem } from 'node:worker_threads'
import { errorMessage, stackOverflowMessage } from './errors.ts'
import type { EngineJob, EngineLogEntry, JobResult } from './jobs.ts'
import { createJobBudget, eitherSignal, type JobListeners, listenToJob, resultOf } from './pool-job.ts'
import { createPoolSlots, type PoolSlots } from './pool-slots.ts'
import { createPoolThreads, type PoolThreads, threadEntry } from './pool-threads.ts'
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
  /**
   * The module every thread loads its one job from, as a URL: the engines' worker (the default). Tests
   * give one that fails to load, as a broken install would.
   */
  workerModule?: string
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
  workerModule: threadEntry.workerModule,
}

export interface RunOptions extends JobListeners {
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
 * Creates the thread pool that runs every engine job off the event loop.
 *
 * ```ts
 * const pool = createEnginePool({ threads: 2 })
 * const result = await pool.run({ name: 'compress', input: { path }, format: 'glb', options: { engine: 'draco' } })
 * ```
 */
export function createEnginePool(options: EnginePoolOptions = {}): EnginePool {
  const o = { ...ENGINE_POOL_DEFAULTS, ...options }
  const threads = createPoolThreads(o)
  const slots = createPoolSlots(o.threads)
  return {
    run: (job, runOptions = {}) => runJob(threads, slots, job, runOptions),
    get active() {
      return slots.running
    },
    get queued() {
      return slots.waiting
    },
    threads: o.threads,
    status: () => ({ ...threads.status(), destroyed: slots.closed }),
    async destroy() {
      // Jobs still waiting for a thread fail, as piscina fails the ones it holds.
      slots.close()
      await threads.destroy()
    },
  }
}

/** Runs one job on a thread once it holds a slot; every failure is a `{ ok: false }` result. */
async function runJob(threads: PoolThreads, slots: PoolSlots, job: EngineJob, runOptions: RunOptions): Promise<JobResult> {
  // The thread would only see a failed hand-over ("the engine stopped on it"): say what happened.
  if ('bytes' in job.input && isDetached(job.input.bytes.buffer))
    return {
      ok: false,
      message: 'internal error: the job input bytes were moved to an earlier job (the pool takes them over): pass a copy',
    }
  const { port1, port2 } = new MessageChannel()
  const budget = createJobBudget(runOptions.budgetMs)
  const channel = listenToJob(port1, runOptions, budget, threads.countRecycled)
  const transferList: TransferListItem[] = [port2]
  if ('bytes' in job.input) transferList.push(job.input.bytes.buffer as ArrayBuffer)
  const signal = eitherSignal(runOptions.signal, budget.signal)
  threads.jobStarted()
  let slot = false
  try {
    slot = await slots.acquire(runOptions.signal)
    if (!slot) return { ok: false, message: slots.closed ? 'the engine pool is stopped' : 'cancelled' }
    const returned = threads.piscina.run(
      { ...job, port: port2 },
      { name: 'runEngineJob', transferList, ...(signal ? { signal } : {}) },
    ) as Promise<JobResult>
    const result = await resultOf(returned, channel.retired)
    // The thread's answer can overtake the lines it wrote on the port, which closing the port drops.
    await channel.linesIn()
    return result
  } catch (error) {
    if (budget.spent && !runOptions.signal?.aborted) return { ok: false, message: workBudgetMessage(runOptions.budgetMs!) }
    return { ok: false, message: threadFailureMessage(error) }
  } finally {
    budget.clear()
    if (slot) slots.release()
    port1.close()
    threads.jobEnded()
  }
}

/** Whether a buffer was moved to another thread (Node 20 has no `ArrayBuffer.prototype.detached`: a view on it cannot be made). */
function isDetached(buffer: ArrayBufferLike): boolean {
  try {
    new Uint8Array(buffer, 0, 0)
    return false
  } catch {
    return true
  }
}

/**
 * The failure of a job whose thread ended under it. What reaches a task names the input's problem
 * (memory, nesting), never the thread's internals; an unknown cause says only that the input
 * stopped the engine, since it is the input that did (every job runs in its own thread).
 */
export function threadFailureMessage(error: unknown): string {
  const message = errorMessage(error)
  if (/out of memory|ERR_WORKER_OUT_OF_MEMORY/i.test(message)) return 'the input needed more memory than an engine thread may use'
  if (/stack overflow|maximum call stack/i.test(message)) return stackOverflowMessage
  if (/abort/i.test(message)) return 'cancelled'
  return 'the input could not be processed: the engine stopped on it'
}
