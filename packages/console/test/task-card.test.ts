import { describe, expect, it } from 'vitest'
import type { TaskRecord } from '../src/types.ts'
import { taskStateWords } from '../src/task-state.ts'
import { progressBarOf, statusLine } from '../src/work/task-card.tsx'

const task = (status: TaskRecord['status'], extra: Partial<TaskRecord> = {}): TaskRecord => ({ task_id: 't', status, ...extra })

describe("a task card's progress bar", () => {
  it('moves with the upload and the task, and is full once the task completed', () => {
    expect(progressBarOf({ uploaded: 0.42 })).toEqual({ kind: 'share', percent: 42 })
    expect(progressBarOf({ uploaded: 1, task: task('pending') })).toEqual({ kind: 'moving' })
    expect(progressBarOf({ uploaded: 1, task: task('processing', { progress: 37 }) })).toEqual({ kind: 'share', percent: 37 })
    expect(progressBarOf({ uploaded: 1, task: task('completed', { progress: 100 }) })).toEqual({ kind: 'share', percent: 100 })
  })

  it('is gone once the task failed or the upload was refused: neither busy nor complete', () => {
    expect(progressBarOf({ uploaded: 1, task: task('failed', { error: 'cancelled' }) })).toEqual({ kind: 'none' })
    // A refused upload had sent all its bytes (uploaded 1) before the service said no.
    expect(progressBarOf({ uploaded: 1, uploadError: 'unsupported format: txt' })).toEqual({ kind: 'none' })
  })
})

describe("a task card's status line", () => {
  it('says an open task is unknown while the service cannot be reached, with its last known state', () => {
    const item = { uploaded: 1, task: task('processing', { progress: 42 }) }
    expect(statusLine(item)).toBe('Processing 42%')
    expect(statusLine(item, false)).toBe('Unknown while the service cannot be reached; last known: processing 42%')
    // An ended task stays what it was: the service will not take it back.
    expect(statusLine({ uploaded: 1, task: task('completed') }, false)).toBe('Completed 100%')
  })

  it('says a task the service no longer has is gone, with no bar', () => {
    const item = { uploaded: 1, task: task('processing', { progress: 42 }), removed: true }
    expect(statusLine(item)).toBe('No longer on the service (deleted, or lost with its data); last known: processing 42%')
    expect(progressBarOf(item)).toEqual({ kind: 'none' })
    // A completed one too: a full bar would say its result is there to download.
    const completed = { uploaded: 1, task: task('completed', { progress: 100 }), removed: true }
    expect(statusLine(completed)).toBe('No longer on the service (deleted, or lost with its data); last known: completed 100%')
    expect(progressBarOf(completed)).toEqual({ kind: 'none' })
  })
})

describe("a task's state in words (the Work page's cards and Admin's task list)", () => {
  it('says a cancelled task is cancelled, not failed, and any other failure with its reason', () => {
    expect(taskStateWords(task('failed', { error: 'cancelled' }))).toBe('Cancelled')
    expect(statusLine({ uploaded: 1, task: task('failed', { error: 'cancelled' }) })).toBe('Cancelled')
    expect(taskStateWords(task('failed', { error: 'unsupported format: txt' }))).toBe('Failed: unsupported format: txt')
    expect(taskStateWords(task('failed'))).toBe('Failed: no reason given')
    expect(taskStateWords(task('pending'))).toBe('Waiting in the queue')
    expect(taskStateWords(task('processing', { progress: 7 }))).toBe('Processing 7%')
  })
})

describe('a card whose upload was cancelled', () => {
  it('says no task was made, with no bar', () => {
    const item = { uploaded: 0.3, uploadCancelled: 'unsent' as const }
    expect(statusLine(item)).toBe('Upload cancelled: no task was made')
    expect(progressBarOf(item)).toEqual({ kind: 'none' })
  })

  it('says the task may have been made when the whole file had gone before the stop', () => {
    const item = { uploaded: 1, uploadCancelled: 'sent' as const }
    expect(statusLine(item)).toBe(
      "Upload stopped after the file was sent: the service may have made the task anyway (if so, it is in Admin's task list)",
    )
    expect(progressBarOf(item)).toEqual({ kind: 'none' })
  })
})
