import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import type { EngineLogEntry } from '../src/jobs.ts'
import { createEnginePool } from '../src/pool.ts'
import { threadEntry } from '../src/pool-threads.ts'

const endThreadsWhileLoading = fileURLToPath(new URL('./support/end-threads-while-loading.cjs', import.meta.url))

describe('the pool thread entry', () => {
  // Piscina ends threads whenever a pool is destroyed or recycled or a job is cancelled, whatever the
  // thread is doing. With an ES module entry, ending one inside its require() aborted the process (a
  // V8 fatal error in Node 20): about seven times in eight within this many rounds on a 2-core machine.
  it('lets a thread be ended at any moment of loading it without taking the process down', async () => {
    const rounds = 250
    const threads = 3
    const run = promisify(execFile)(
      process.execPath,
      [endThreadsWhileLoading, threadEntry.filename, threadEntry.workerModule, String(rounds), String(threads)],
      { encoding: 'utf8', timeout: 240_000 },
    )
    const { stdout, stderr } = await run.catch((error: { code: unknown; signal: unknown; stderr: string }) => {
      throw new Error(`the process ended (${error.signal ?? error.code}): ${error.stderr.split('\n')[0]}`)
    })
    expect(stderr).toBe('')
    expect(stdout).toMatch(new RegExp(`^ended ${rounds * threads} threads during their first [\\d.]+ ms`))
  }, 300_000)

  it('answers each job with the reason when the worker cannot load, never failing the pool nor leaving a job waiting', async () => {
    // What a broken install or a thread out of descriptors meets: the worker module throws as it loads.
    // Piscina's error on the pool, had it come, would end the test run as an unhandled error.
    const workerModule = `data:text/javascript,${encodeURIComponent("throw new Error('no codec here')")}`
    const retired: unknown[] = []
    const pool = createEnginePool({ threads: 1, prestart: true, workerModule, onLog: () => undefined })
    try {
      for (let job = 0; job < 2; job++) {
        const onLog = (entry: EngineLogEntry) => retired.push(entry.fields?.reason)
        const result = await pool.run({ name: 'compress', input: { bytes: new Uint8Array(12) }, format: 'glb', options: {} }, { onLog })
        expect(result).toEqual({ ok: false, message: 'internal error: the engine could not start: no codec here' })
      }
    } finally {
      await pool.destroy()
    }
    // Each thread answered one job and ended; piscina started a fresh one for the next, which tried again.
    expect(retired).toEqual(['its worker could not load: no codec here', 'its worker could not load: no codec here'])
  }, 60_000)
})
