import { describe, expect, it } from 'vitest'
import { type TaskFilters, withChange, withFirstPage, withoutTask } from '../src/admin/live-tasks.ts'
import type { TaskRecord } from '../src/types.ts'

const ANY: TaskFilters = { status: '', type: '', batch_id: '' }
const task = (id: string, created: string, status: TaskRecord['status'] = 'pending', type = 'compress'): TaskRecord => ({
  task_id: id,
  type,
  status,
  created_at: `2026-11-25T10:00:${created}Z`,
})

describe('the admin task list following the event stream', () => {
  const list = [task('b', '02', 'processing'), task('a', '01', 'completed')]

  it('moves a listed task forward, never back', () => {
    expect(withChange(list, task('b', '02', 'completed'), ANY).map((row) => row.status)).toEqual(['completed', 'completed'])
    expect(withChange(list, task('a', '01', 'pending'), ANY)).toBe(list)
  })

  it('puts a new task that matches the filters at the top, and nothing else', () => {
    expect(withChange(list, task('c', '03'), ANY).map((row) => row.task_id)).toEqual(['c', 'b', 'a'])
    expect(withChange(list, task('c', '03'), { ...ANY, type: 'diagnose' })).toBe(list)
    // An older task beyond the pages read, or one already under way, is not news.
    expect(withChange(list, task('z', '00'), ANY)).toBe(list)
    expect(withChange(list, task('c', '03', 'completed'), ANY)).toBe(list)
  })

  it('takes a removed task off', () => {
    expect(withoutTask(list, 'b').map((row) => row.task_id)).toEqual(['a'])
    expect(withoutTask(list, 'x')).toBe(list)
  })

  it('keeps, over a page read meanwhile, newer records and newer matching tasks the stream brought', () => {
    const current = [task('c', '03'), task('d', '04', 'pending', 'diagnose'), task('b', '02', 'completed')]
    const page = [task('b', '02', 'processing'), task('a', '01', 'completed')]
    const rows = withFirstPage(current, page, { ...ANY, type: 'compress' })
    expect(rows.map((row) => `${row.task_id}:${row.status}`)).toEqual(['c:pending', 'b:completed', 'a:completed'])
  })
})
