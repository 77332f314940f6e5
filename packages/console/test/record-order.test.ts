import { describe, expect, it } from 'vitest'
import { isOlder, ShownRecords } from '../src/work/record-order.ts'
import type { TaskRecord } from '../src/types.ts'

const record = (status: TaskRecord['status'], progress?: number): TaskRecord =>
  ({ task_id: 't', type: 'convert', status, ...(progress === undefined ? {} : { progress }) }) as TaskRecord

describe('which of two records of a task the page shows', () => {
  it('drops a read that comes back after the stream told of a later state', () => {
    expect(isOlder(record('pending'), record('completed'))).toBe(true)
    expect(isOlder(record('processing', 90), record('failed'))).toBe(true)
    expect(isOlder(record('pending'), record('processing', 10))).toBe(true)
    expect(isOlder(record('processing', 40), record('processing', 60))).toBe(true)
  })

  it('shows every step forward, the same state again, and the first record of a task', () => {
    expect(isOlder(record('completed'), record('pending'))).toBe(false)
    expect(isOlder(record('processing', 60), record('processing', 40))).toBe(false)
    expect(isOlder(record('processing', 40), record('processing', 40))).toBe(false)
    expect(isOlder(record('completed'), record('completed'))).toBe(false)
    expect(isOlder(record('pending'), undefined)).toBe(false)
  })
})

describe('the records shown across an outage', () => {
  it('takes what the service says of an open task after an outage, even a state the task had passed (a restart re-queues it)', () => {
    const shown = new ShownRecords()
    expect(shown.accept(record('processing', 42), true)).toBe(true)
    expect(shown.accept(record('pending'), true)).toBe(false)
    shown.forgetOpen()
    expect(shown.accept(record('pending'), true)).toBe(true)
    // From then on, the rule holds again.
    expect(shown.accept(record('processing', 5), true)).toBe(true)
    expect(shown.accept(record('pending'), true)).toBe(false)
  })

  it('keeps an ended task ended: an outage takes nothing back from a completed one', () => {
    const shown = new ShownRecords()
    expect(shown.accept(record('completed'), true)).toBe(true)
    shown.forgetOpen()
    expect(shown.accept(record('processing', 90), true)).toBe(false)
  })
})
