import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { createRunSignal } from '../src/tasks/run-signal.ts'

describe('run signal', () => {
  it('aborts on the time-out and says so', async () => {
    const run = createRunSignal({ timeoutMs: 30 })
    expect(run.signal.aborted).toBe(false)
    await sleep(80)
    expect(run.signal.aborted).toBe(true)
    expect(run.timedOut()).toBe(true)
    expect(run.handedBack()).toBe(false)
  })

  it('aborts on a hand-back, which is not a time-out', () => {
    const handBack = new AbortController()
    const run = createRunSignal({ timeoutMs: 10_000, handBack: handBack.signal })
    handBack.abort()
    expect(run.signal.aborted).toBe(true)
    expect(run.handedBack()).toBe(true)
    expect(run.timedOut()).toBe(false)
    run.clear()
  })

  it('never aborts once cleared, nor without a time-out', async () => {
    const cleared = createRunSignal({ timeoutMs: 20 })
    cleared.clear()
    const none = createRunSignal()
    await sleep(60)
    expect(cleared.signal.aborted).toBe(false)
    expect(none.signal.aborted).toBe(false)
    expect(none.timedOut()).toBe(false)
  })
})
