import type { TaskRecord } from '../types.ts'
import { isOlder } from '../work/record-order.ts'

/** The task list's filters, as the form applies them (an empty value: any). */
export interface TaskFilters {
  status: string
  type: string
  batch_id: string
}

function matches(record: TaskRecord, filters: TaskFilters): boolean {
  return (
    (!filters.status || record.status === filters.status) &&
    (!filters.type || record.type === filters.type) &&
    (!filters.batch_id || record.batch_id === filters.batch_id)
  )
}

/**
 * The list shown, after one change from the event stream. A task on the list takes its newer record
 * (and keeps its row when it no longer matches a status filter: rows do not vanish under the
 * reader's pointer; Filter reads the list again). A task not on it joins at the top only when it is
 * new: pending, matching the filters and no older than the newest row — a change to an old task
 * beyond the pages read is not news.
 */
export function withChange(list: TaskRecord[], record: TaskRecord, filters: TaskFilters): TaskRecord[] {
  const at = list.findIndex((row) => row.task_id === record.task_id)
  if (at >= 0) {
    if (isOlder(record, list[at])) return list
    return list.map((row, index) => (index === at ? { ...row, ...record } : row))
  }
  const newest = list[0]?.created_at
  const isNew = record.status === 'pending' && (!newest || (record.created_at ?? '') >= newest)
  return isNew && matches(record, filters) ? [record, ...list] : list
}

/** The list without a task whose record is gone. */
export function withoutTask(list: TaskRecord[], taskId: string): TaskRecord[] {
  return list.some((row) => row.task_id === taskId) ? list.filter((row) => row.task_id !== taskId) : list
}

/**
 * The first page as read, with what the stream delivered while the read was on its way: a row's
 * newer record, and tasks made after the newest one the page holds.
 */
export function withFirstPage(current: TaskRecord[], page: TaskRecord[], filters: TaskFilters): TaskRecord[] {
  const live = new Map(current.map((row) => [row.task_id, row]))
  const rows = page.map((row) => {
    const seen = live.get(row.task_id)
    return seen && isOlder(row, seen) ? seen : row
  })
  const newest = page[0]?.created_at ?? ''
  const ids = new Set(page.map((row) => row.task_id))
  const made = current.filter((row) => !ids.has(row.task_id) && (row.created_at ?? '') > newest && matches(row, filters))
  return [...made, ...rows]
}
