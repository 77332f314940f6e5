import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { createProgressWriter } from '../src/tasks/progress-writer.ts'

/** A writer whose writes are kept with the time they happened (ms since the start). */
function recorded(intervalMs: number, accept: (value: number) => boolean = () => true) {
  const start = Date.now()
  const writes: { value: number; at: number }[] = []
  const writer = createProgressWriter({
    intervalMs,
    write: (value) => {
      if (!accept(value)) return false
      writes.push({ value, at: Date.now() - start })
      return true
    },
  })
  return { writer, writes }
}

describe('progress writer', () => {
  it('writes every report at once with no interval, rounded and below 100', () => {
    const { writer, writes } = recorded(0)
    for (const value of [1.4, 20.6, 100, 250]) writer.report(value)
    expect(writes.map((w) => w.value)).toEqual([1, 21, 99, 99])
  })

  it('never goes back: a lower report writes the highest value seen', () => {
    const { writer, writes } = recorded(0)
    writer.report(50)
    writer.report(10)
    expect(writes.map((w) => w.value)).toEqual([50, 50])
  })

  it('writes nothing inside the first interval, then the last value of the burst when it ends', async () => {
    const { writer, writes } = recorded(150)
    for (let value = 1; value <= 30; value++) writer.report(value)
    expect(writes).toEqual([])
    await sleep(250)
    expect(writes.map((w) => w.value)).toEqual([30])
    expect(writes[0]!.at).toBeGreaterThanOrEqual(140)
  })

  it('keeps at most one write per interval in a long burst', async () => {
    const { writer, writes } = recorded(60)
    const end = Date.now() + 400
    for (let value = 0; Date.now() < end; value++) {
      writer.report(value / 100)
      await sleep(5)
    }
    writer.stop()
    expect(writes.length).toBeGreaterThanOrEqual(3)
    expect(writes.length).toBeLessThanOrEqual(7)
    for (let i = 1; i < writes.length; i++) expect(writes[i]!.at - writes[i - 1]!.at).toBeGreaterThanOrEqual(55)
  })

  it('drops the waiting write on stop', async () => {
    const { writer, writes } = recorded(50)
    writer.report(10)
    writer.stop()
    await sleep(120)
    expect(writes).toEqual([])
  })

  it('a skipped write starts no new interval: the next report writes at once', () => {
    let skip = true
    const { writer, writes } = recorded(0, () => !skip)
    writer.report(5)
    skip = false
    writer.report(6)
    expect(writes.map((w) => w.value)).toEqual([6])
  })
})
