import type { TaskStore } from '../storage/task-store.ts'
import { DISK_FULL_TEXT, isDiskFull } from '../storage/disk-full.ts'
import type { TaskState } from './task-state.ts'

export interface RecordWriterOptions {
  tasks: TaskStore
  /** How long a failing required write is retried before it rejects (ms). */
  retryMs?: number
  /** The first wait between two attempts (ms); each next wait doubles, up to `maxWaitMs`. */
  firstWaitMs?: number
  maxWaitMs?: number
  /** True while the process is stopping: a failed write is not retried then. */
  stopping?: () => boolean
  /** Told of each retry: the record, why its write failed (without paths), the wait before the next attempt. */
  onRetry?: (record: TaskState, reason: string, waitMs: number) => void
}

export const RECORD_WRITER_DEFAULTS = { retryMs: 5 * 60_000, firstWaitMs: 250, maxWaitMs: 15_000 }

/**
 * The writes of one run's record, in order through one chain, so a late progress write can never
 * overwrite the final state. The chain never stays rejected: one failed write blocks no later one.
 */
export interface RecordWriter {
  /** A state change that must reach the record (start, end): retried with backoff while it fails, e.g. until a full disk has room again. */
  put(record: TaskState): Promise<void>
  /** Best effort (progress): one attempt; a failure is dropped, the next write carries newer state. */
  offer(record: TaskState): Promise<void>
  /** Resolves once every write queued so far has ended. */
  settled(): Promise<void>
}

export function createRecordWriter(options: RecordWriterOptions): RecordWriter {
  const { tasks } = options
  const retryMs = options.retryMs ?? RECORD_WRITER_DEFAULTS.retryMs
  const firstWait = options.firstWaitMs ?? RECORD_WRITER_DEFAULTS.firstWaitMs
  const maxWait = options.maxWaitMs ?? RECORD_WRITER_DEFAULTS.maxWaitMs
  let chain = Promise.resolve()

  async function putWithRetries(record: TaskState): Promise<void> {
    const giveUpAt = Date.now() + retryMs
    for (let wait = firstWait; ; wait = Math.min(wait * 2, maxWait)) {
      try {
        return await tasks.put(record)
      } catch (error) {
        if (Date.now() + wait > giveUpAt || options.stopping?.()) throw error
        options.onRetry?.(record, isDiskFull(error) ? DISK_FULL_TEXT : (error as Error).message, wait)
        await new Promise((resolve) => setTimeout(resolve, wait))
      }
    }
  }

  const queue = (write: () => Promise<void>) => {
    const next = chain.then(write)
    chain = next.catch(() => undefined)
    return next
  }

  return {
    put: (record) => queue(() => putWithRetries(record)),
    offer: (record) => queue(() => tasks.put(record)),
    settled: () => chain,
  }
}
