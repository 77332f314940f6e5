import type { TaskRecord } from '../types.ts'

/** Where a status stands on a task's way: pending, processing, then one of the two ends. */
const STAGE: Record<TaskRecord['status'], number> = { pending: 0, processing: 1, completed: 2, failed: 2 }

/**
 * Whether `next` is older than `seen`, the newest record of the same task the page has shown. Two
 * sources deliver records (the event stream and direct reads) and their answers can cross: a read
 * sent while the task was pending may come back after the stream said it completed. Showing it would
 * leave the card waiting for an event that already came. A task only moves forward (a task picked
 * up again after a crash is the exception: the page keeps its last progress until it moves past it).
 */
export function isOlder(next: TaskRecord, seen: TaskRecord | undefined): boolean {
  if (!seen) return false
  const [stage, seenStage] = [STAGE[next.status], STAGE[seen.status]]
  if (stage !== seenStage) return stage < seenStage
  return stage === 1 && (next.progress ?? 0) < (seen.progress ?? 0)
}

/**
 * The newest record the page showed of each task, to drop the older ones (`isOlder`). An outage ends
 * that rule for the tasks still open: the service may have restarted and put a running task back in
 * the queue (its progress starts again) or lost it, so what the page knew before is no longer newer
 * than what the service says now; `forgetOpen` makes the next record of each open task the page's.
 */
export class ShownRecords {
  private readonly newest = new Map<string, TaskRecord>()

  /** Whether `record` is to be shown; it is remembered as the task's newest when `remember` (a task the page follows). */
  accept(record: TaskRecord, remember: boolean): boolean {
    if (isOlder(record, this.newest.get(record.task_id))) return false
    if (remember || this.newest.has(record.task_id)) this.newest.set(record.task_id, record)
    return true
  }

  /** Forgets the records of the tasks not yet ended: the service's next word on them stands, whatever it is. */
  forgetOpen(): void {
    for (const [id, record] of this.newest) if (record.status !== 'completed' && record.status !== 'failed') this.newest.delete(id)
  }

  forget(taskId: string): void {
    this.newest.delete(taskId)
  }
}
