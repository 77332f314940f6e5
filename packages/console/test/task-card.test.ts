import { describe, expect, it } from 'vitest'
import type { TaskRecord } from '../src/types.ts'
import { progressBarOf } from '../src/work/task-card.tsx'

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
