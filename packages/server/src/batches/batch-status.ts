import type { BatchRecord, BatchStatus, TaskStatus } from '@mos/sdk/contract'
import type { BatchState } from './batch-store.ts'

/**
 * The batch's status from its sub-tasks: `processing` while any is pending or processing, then
 * `completed` (all completed), `failed` (all failed) or `partially_failed` (some of each).
 */
function batchStatus(statuses: readonly TaskStatus[]): BatchStatus {
  const completed = statuses.filter((s) => s === 'completed').length
  const failed = statuses.filter((s) => s === 'failed').length
  if (completed + failed < statuses.length) return 'processing'
  if (failed === 0) return 'completed'
  return completed === 0 ? 'failed' : 'partially_failed'
}

/**
 * The public batch record (2.4) with live counts. A sub-task whose record is gone (removed by
 * retention) counts as failed: it will never complete.
 */
export function toBatchRecord(batch: BatchState, statuses: (TaskStatus | undefined)[]): BatchRecord {
  const known = statuses.map((s) => s ?? 'failed')
  return {
    batch_id: batch.batch_id,
    status: batchStatus(known),
    total: batch.tasks.length,
    completed: known.filter((s) => s === 'completed').length,
    failed: known.filter((s) => s === 'failed').length,
    tasks: batch.tasks.map((task, i) => ({ task_id: task.task_id, filename: task.filename, status: known[i]! })),
  }
}
