import type { MessagePort } from 'node:worker_threads'
import type { EngineLogEntry, JobResult, PortMessage } from './jobs.ts'

/** What a caller hears of its job while it runs. */
export interface JobListeners {
  onProgress?: (progress: number) => void
  /** Log lines the job's thread writes (warnings, its retirement), to be logged with the task's fields. */
  onLog?: (entry: EngineLogEntry) => void
}

/**
 * The most a job may hold its thread: a signal that fires `budgetMs` after `start` (called when a
 * thread takes the job, so time in the queue does not count). With no budget it never fires.
 */
export interface JobBudget {
  readonly signal: AbortSignal | undefined
  start(): void
  /** True once the budget ran out. */
  readonly spent: boolean
  clear(): void
}

export function createJobBudget(budgetMs: number | undefined): JobBudget {
  const controller = budgetMs !== undefined ? new AbortController() : undefined
  let timer: ReturnType<typeof setTimeout> | undefined
  return {
    signal: controller?.signal,
    start() {
      if (controller && !timer) timer = setTimeout(() => controller.abort(), budgetMs)
    },
    get spent() {
      return controller?.signal.aborted ?? false
    },
    clear: () => clearTimeout(timer),
  }
}

/** The caller's signal and the budget's as one (undefined when there is neither). */
export function eitherSignal(...candidates: (AbortSignal | undefined)[]): AbortSignal | undefined {
  const signals = candidates.filter((signal): signal is AbortSignal => signal !== undefined)
  return signals.length > 1 ? AbortSignal.any(signals) : signals[0]
}

/** How long a job's answer waits for the lines its thread sent ahead of it (a thread sends them at once). */
const LINES_WAIT_MS = 2000

/** A job's port as the pool hears it. */
export interface JobChannel {
  /** The result a thread that retires after this job sends on the port; never resolves for one that does not. */
  retired: Promise<JobResult>
  /**
   * Resolves once the thread's last message (its end, or its result when it retires) has come, so
   * every line it sent is with the listeners, or LINES_WAIT_MS after it is called.
   */
  linesIn(): Promise<void>
}

/**
 * Hands the job's messages to its listeners: progress, log lines and, from a thread that retires
 * after this job, its result, which it sends on the port before it ends (worker.ts).
 */
export function listenToJob(port: MessagePort, listeners: JobListeners, budget: JobBudget, onRetired: () => void): JobChannel {
  let ended: () => void = () => undefined
  const lastMessage = new Promise<void>((resolve) => (ended = resolve))
  const retired = new Promise<JobResult>((resolve) => {
    port.on('message', (message: PortMessage) => {
      // The worker's first message says a thread has taken the job: its budget starts now.
      budget.start()
      if ('progress' in message) listeners.onProgress?.(message.progress)
      else if ('log' in message) listeners.onLog?.(message.log)
      else if ('end' in message) ended()
      else if ('final' in message) {
        onRetired()
        listeners.onLog?.({ level: 'info', message: 'engine thread recycled', fields: { ...message.retiring } })
        port.postMessage('received')
        ended()
        resolve(message.final)
      }
    })
  })
  const linesIn = async () => {
    let timer: ReturnType<typeof setTimeout> | undefined
    await Promise.race([lastMessage, new Promise<void>((resolve) => (timer = setTimeout(resolve, LINES_WAIT_MS)))])
    clearTimeout(timer)
  }
  return { retired, linesIn }
}

/** How long a retired thread's result waits for piscina to see the thread end (so its slot is freed after). */
const RETIRED_THREAD_END_MS = 10_000

/**
 * The job's result: piscina's answer, or the one a retiring thread sent on its port. A retiring
 * thread's task ends in piscina with "worker exited" once the thread has ended; its result came on
 * the port, and its slot is freed only after that end (pool-slots.ts). Rejects as piscina does.
 */
export async function resultOf(returned: Promise<JobResult>, retiredResult: Promise<JobResult>): Promise<JobResult> {
  const outcome = returned.then(
    (result) => ({ result }),
    (error: unknown) => ({ error }),
  )
  const first = await Promise.race([outcome, retiredResult.then((final) => ({ final }))])
  if ('final' in first) {
    await Promise.race([outcome, new Promise((resolve) => setTimeout(resolve, RETIRED_THREAD_END_MS).unref())])
    return first.final
  }
  if ('error' in first) throw first.error
  return first.result
}
