import { readFile } from 'node:fs/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { shared } from '../../../test/support/corpus.ts'
import { createEnginePool, workBudgetMessage, workBudgetMs } from '../src/index.ts'
import { testImage } from './texture-fixtures.ts'

describe('work budget', () => {
  it('scales with the input size', () => {
    expect(workBudgetMs(0, { baseSeconds: 60, secondsPerMb: 10 })).toBe(60_000)
    expect(workBudgetMs(512 * 1024, { baseSeconds: 60, secondsPerMb: 10 })).toBe(65_000)
    expect(workBudgetMs(100 * 1024 * 1024, { baseSeconds: 1, secondsPerMb: 0.5 })).toBe(51_000)
  })

  describe('through the pool', () => {
    // One thread: the job stopped at its budget and the next one share it (or its replacement).
    const pool = createEnginePool({ threads: 1, prestart: true })
    afterAll(() => pool.destroy())
    const cowObj = () => readFile(shared('obj', 'cow.obj')).then((b) => new Uint8Array(b))

    it('stops a job at its budget with a message about the input, and the next job runs', async () => {
      // A warm thread: the budget below counts the job, not the thread loading its codecs.
      await pool.run({ name: 'convert', input: { bytes: await cowObj() }, format: 'obj', options: { target_format: 'glb' } })
      // ETC1S of a 1024² image takes seconds (docs/textures.md): far past a 300 ms budget.
      const png = await testImage(1024, 'png')
      const stopped = await pool.run(
        { name: 'texture_ktx2', input: { bytes: png }, format: 'png', options: { uastc: false, quality: 128 } },
        { budgetMs: 300 },
      )
      // Only the budget's stop answers with this message: without it the job completes, seconds later.
      expect(stopped).toEqual({ ok: false, message: workBudgetMessage(300) })
      expect(workBudgetMessage(300)).toBe(
        'the input needed more work than its budget allows (stopped after 0.3 s, the budget for its size)',
      )
      const next = await pool.run(
        { name: 'convert', input: { bytes: await cowObj() }, format: 'obj', options: { target_format: 'glb' } },
        { budgetMs: 30_000 },
      )
      expect(next.ok ? 'ok' : next.message).toBe('ok')
    })

    it('counts from when a thread starts the job, not from when it was queued', async () => {
      const png = await testImage(1024, 'png')
      const long = pool.run({ name: 'texture_ktx2', input: { bytes: png }, format: 'png', options: { uastc: false, quality: 128 } })
      // Queued behind a job of seconds; its own work takes well under its budget.
      const queued = pool.run(
        { name: 'convert', input: { bytes: await cowObj() }, format: 'obj', options: { target_format: 'glb' } },
        { budgetMs: 800 },
      )
      const [first, second] = await Promise.all([long, queued])
      expect(first.ok ? 'ok' : first.message).toBe('ok')
      expect(second.ok ? 'ok' : second.message).toBe('ok')
    })
  })
})
