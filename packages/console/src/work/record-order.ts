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
