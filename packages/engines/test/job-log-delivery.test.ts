import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { corpusFiles, shared } from '../../../test/support/corpus.ts'
import { createEnginePool, type EngineLogEntry } from '../src/index.ts'

const { available, paths } = corpusFiles({ knight: shared('glb', 'chr_knight.glb') })

/**
 * A job's thread writes its last log line (its memory, at debug) on the job's port just before it
 * answers through piscina: two channels, so the answer can come first. The pool must still hand the
 * caller every line the thread wrote before it says the job is over.
 */
describe.skipIf(!available)('log lines of a job', () => {
  it('reach the caller before the job’s result, on every job', async () => {
    const bytes = await readFile(paths.knight)
    const pool = createEnginePool({ threads: 1 })
    const missing: number[] = []
    try {
      for (let index = 0; index < 40; index++) {
        const logs: EngineLogEntry[] = []
        const result = await pool.run(
          { name: 'compress', input: { bytes: new Uint8Array(bytes) }, format: 'glb', options: { engine: 'meshopt' } },
          { onLog: (entry) => logs.push(entry) },
        )
        expect(result.ok, JSON.stringify(result)).toBe(true)
        if (!logs.some((entry) => entry.message === 'engine thread memory')) missing.push(index)
      }
    } finally {
      await pool.destroy()
    }
    expect(missing, 'jobs whose last log line was lost').toEqual([])
  }, 120_000)
})
