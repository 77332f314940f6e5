import { ERROR_TEXTS, parseTaskListQuery, type TaskRecord } from '@mos/sdk/contract'
import { getQuery, type H3Event } from 'h3'
import type { ServiceContext } from '../context.ts'
import { ApiError } from '../errors.ts'
import { entryTaskId } from '../tasks/task-index.ts'
import { toTaskRecord, type TaskState } from '../tasks/task-state.ts'

/**
 * Most index entries one listing reads the records of. A filter that matches little would
 * otherwise read every record of the key in one request; past this bound the page comes back
 * short, with a `next_cursor` to go on from.
 */
export const LIST_SCAN_BUDGET = 500

/** Cursors are index entries (`<created_at> <task_id>`), opaque to clients. */
const encodeCursor = (entry: string) => Buffer.from(entry).toString('base64url')
function decodeCursor(cursor: string): string {
  const entry = Buffer.from(cursor, 'base64url').toString()
  if (!/^\S+ [A-Za-z0-9_-]{1,128}$/.test(entry))
    throw new ApiError(400, ERROR_TEXTS.invalidField('cursor', 'must be a next_cursor from an earlier page'))
  return entry
}

/**
 * GET /api/v1/tasks (Mos extension): the caller's tasks, newest first, filtered by status, type
 * and batch, a page at a time. Reads the owner's index, then only the records of the entries it
 * walks; an entry whose record is gone (removed meanwhile) is skipped. `present` makes each item
 * (the public record; the console's administrator sees more).
 */
export async function listTasks<T = TaskRecord>(
  event: H3Event,
  ctx: ServiceContext,
  owner: string,
  present: (task: TaskState) => T = (task) => toTaskRecord(task, ctx.variant) as T,
): Promise<{ tasks: T[]; next_cursor: string | null }> {
  const parsed = parseTaskListQuery(getQuery(event))
  if (!parsed.ok) throw new ApiError(400, parsed.error)
  const query = parsed.value
  const matches = (task: TaskState) =>
    (!query.status || task.status === query.status) &&
    (!query.type || task.type === query.type) &&
    (!query.batch_id || task.batch_id === query.batch_id)

  const tasks: T[] = []
  let position = query.cursor ? decodeCursor(query.cursor) : undefined
  let scanned = 0
  while (tasks.length < query.limit && scanned < LIST_SCAN_BUDGET) {
    const count = Math.min(query.limit - tasks.length, LIST_SCAN_BUDGET - scanned)
    const entries = await ctx.storage.taskIndex.page(owner, position, count)
    const records = await Promise.all(entries.map((entry) => ctx.storage.taskStore.get(entryTaskId(entry))))
    records.forEach((record) => {
      if (record && matches(record)) tasks.push(present(record))
    })
    scanned += entries.length
    position = entries.at(-1) ?? position
    if (entries.length < count) return { tasks, next_cursor: null }
  }
  return { tasks, next_cursor: position === undefined ? null : encodeCursor(position) }
}
