import type { TaskStore } from '../storage/task-store.ts'
import { DISK_FULL_TEXT, isDiskFull } from '../storage/disk-full.ts'
import { retryStoreCall, type StoreRetryPolicy } from './store-retry.ts'
import type { TaskState } from './task-state.ts'

export interface RecordWriterOptions extends Omit<StoreRetryPolicy, 'onRetry'> {
  tasks: TaskStore
  /** Told of each retry: the record, why its write failed (without paths), the wait before the next attempt. */
  onRetry?: (record: TaskState, reason: string, waitMs: number) => void
}

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
  const { tasks, onRetry, ...policy } = options
  let chain = Promise.resolve()

  const putWithRetries = (record: TaskState) =>
    retryStoreCall(() => tasks.put(record), {
      ...policy,
      onRetry: (error, waitMs) => onRetry?.(record, isDiskFull(error) ? DISK_FULL_TEXT : (error as Error).message, waitMs),
    })

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
