import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import { createEnginePool, type EngineJob, type EngineLogEntry, type JobSuccess } from '../src/index.ts'

const { available, paths } = corpusFiles({
  engine: assimp('glTF2', '2CylinderEngine-glTF-Binary', '2CylinderEngine.glb'),
  knight: shared('glb', 'chr_knight.glb'),
})

const compressJob = async (path: string): Promise<EngineJob> => ({
  name: 'compress',
  // Bytes, not a path: the result comes back as bytes too, the case a retiring thread must transfer.
  input: { bytes: new Uint8Array(await readFile(path)) },
  format: 'glb',
  options: { engine: 'draco' },
})

describe.skipIf(!available)('engine thread recycling', () => {
  it('replaces a thread after N jobs, with every job answered, also when jobs queue behind the retiring thread', async () => {
    const logs: EngineLogEntry[] = []
    const pool = createEnginePool({ threads: 1, recycling: { afterJobs: 2 } })
    try {
      // A reference result from a thread that does not retire.
      const reference = createEnginePool({ threads: 1 })
      const expected = (await reference.run(await compressJob(paths.knight))) as JobSuccess
      await reference.destroy()
      expect(expected.ok).toBe(true)

      // Seven jobs queued at once on one thread: threads retire after jobs 2, 4 and 6 while others wait.
      const jobs = await Promise.all(Array.from({ length: 7 }, () => compressJob(paths.knight)))
      const results = await Promise.all(jobs.map((job) => pool.run(job, { onLog: (entry) => logs.push(entry) })))
      for (const result of results) {
        expect(result.ok, JSON.stringify(result)).toBe(true)
        const success = result as JobSuccess
        expect(success.size).toBe(expected.size)
        expect(Buffer.from(success.bytes!).equals(Buffer.from(expected.bytes!))).toBe(true)
      }
      expect(pool.status().recycledThreads).toBe(3)
      const retirements = logs.filter((entry) => entry.message === 'engine thread recycled')
      expect(retirements).toHaveLength(3)
      expect(retirements[0]!.fields).toMatchObject({ reason: 'ran 2 jobs', jobs: 2 })
      expect(retirements[0]!.fields!.memoryMb).toBeGreaterThan(0)
    } finally {
      await pool.destroy()
    }
  }, 120_000)

  it('replaces a thread whose memory is above the threshold after a job, and the next job runs on a fresh one', async () => {
    const logs: EngineLogEntry[] = []
    // Any thread that loaded the codecs holds more than 1 MB: every job retires its thread.
    const pool = createEnginePool({ threads: 1, recycling: { aboveMb: 1 } })
    try {
      for (const path of [paths.engine, paths.knight, paths.engine]) {
        const result = await pool.run(await compressJob(path), { onLog: (entry) => logs.push(entry) })
        expect(result.ok).toBe(true)
      }
      expect(pool.status().recycledThreads).toBe(3)
      expect(logs.map((entry) => entry.fields?.reason)).toEqual(
        expect.arrayContaining([expect.stringMatching(/^holds \d+ MB \(over 1 MB\)$/)]),
      )
    } finally {
      await pool.destroy()
    }
  }, 120_000)

  it('answers every job, also those waiting for a thread, when the pool is stopped', async () => {
    const pool = createEnginePool({ threads: 1 })
    const runs = await Promise.all([1, 2, 3].map(() => compressJob(paths.knight))).then((jobs) => jobs.map((job) => pool.run(job)))
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(pool.queued).toBe(2)
    await pool.destroy()
    const results = await Promise.all(runs)
    expect(results.every((result) => !result.ok)).toBe(true)
    expect(results.filter((result) => !result.ok && result.message === 'the engine pool is stopped')).toHaveLength(2)
  }, 60_000)

  it('replaces threads that ran jobs once the pool has been idle, keeping prestarted threads up', async () => {
    const events: EngineLogEntry[] = []
    const pool = createEnginePool({ threads: 2, prestart: true, idleRecycleMs: 300, onLog: (entry) => events.push(entry) })
    try {
      await new Promise((resolve) => setTimeout(resolve, 500))
      // No job yet: nothing to recycle.
      expect(pool.status().recycledThreads).toBe(0)
      expect((await pool.run(await compressJob(paths.knight))).ok).toBe(true)
      await new Promise((resolve) => setTimeout(resolve, 800))
      expect(pool.status()).toMatchObject({ recycledThreads: 2, liveThreads: 2, destroyed: false })
      expect(events).toEqual([expect.objectContaining({ message: 'engine threads recycled (idle)', fields: { threads: 2, idleMs: 300 } })])
      expect((await pool.run(await compressJob(paths.engine))).ok).toBe(true)
    } finally {
      await pool.destroy()
    }
  }, 120_000)
})
