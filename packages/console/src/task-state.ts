import type { CANCELLED_ERROR } from '@mos/sdk/contract'
import type { TaskRecord } from './types.ts'

/**
 * The `error` of a task ended by a cancel (the contract's CANCELLED_ERROR, typed against it so the two cannot drift;
 * the value is written here because importing it would bring the contract's zod schemas into the page).
 */
const CANCELLED: typeof CANCELLED_ERROR = 'cancelled'

/**
 * A task's state as the console shows it: the contract's four statuses, with a cancelled task told apart from one
 * that failed. The contract has no `cancelled` status (a cancel ends a task `failed` with the error `cancelled`), but
 * whoever pressed Cancel asked for that end: "Failed: cancelled" in red read as a fault.
 */
export type ShownState = TaskRecord['status'] | 'cancelled'

export function shownStateOf(task: Pick<TaskRecord, 'status' | 'error'>): ShownState {
  return task.status === 'failed' && task.error === CANCELLED ? 'cancelled' : task.status
}

/** Whether the task has reached an end the service will not take back (a cancel included). */
export const hasEnded = (task: Pick<TaskRecord, 'status'> | undefined): boolean => task?.status === 'completed' || task?.status === 'failed'

/**
 * A task's state in words, the same on the Work page's cards and in Admin's task list:
 * `Waiting in the queue`, `Processing 42%`, `Completed 100%`, `Cancelled`, `Failed: <the service's reason>`.
 */
export function taskStateWords(task: Pick<TaskRecord, 'status' | 'error' | 'progress'>): string {
  switch (shownStateOf(task)) {
    case 'pending':
      return 'Waiting in the queue'
    case 'processing':
      return `Processing ${task.progress ?? 0}%`
    case 'completed':
      return 'Completed 100%'
    case 'cancelled':
      return 'Cancelled'
    case 'failed':
      return `Failed: ${task.error ?? 'no reason given'}`
  }
}
