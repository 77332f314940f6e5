import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawnService } from './service.ts'

export interface ColdStartResult {
  /** Each run: ms from spawning the process to its first answer on /livez and its first 200 on /readyz. */
  runs: { liveMs: number; readyMs: number }[]
  bestReadyMs: number
  medianReadyMs: number
}

/**
 * Cold start as an orchestrator sees it: spawn the service (what `npm start` runs) with the default
 * engine settings (every thread started at boot), then poll /readyz every 10 ms until it answers 200.
 */
export async function measureColdStart(runs: number): Promise<ColdStartResult> {
  const results: ColdStartResult['runs'] = []
  for (let i = 0; i < runs; i++) {
    const dataDir = await mkdtemp(join(tmpdir(), 'mos-cold-'))
    const port = 20000 + Math.floor(Math.random() * 20000)
    const start = performance.now()
    const child = spawnService(port, dataDir, {}, ['ignore', 'ignore', 'pipe'])
    let stderr = ''
    child.stderr!.on('data', (d) => (stderr += d))
    let liveMs = 0
    try {
      for (;;) {
        if (child.exitCode !== null) throw new Error(`service exited: ${stderr}`)
        if (performance.now() - start > 60_000) throw new Error('service not ready after 60 s')
        try {
          if (!liveMs && (await fetch(`http://127.0.0.1:${port}/livez`)).ok) liveMs = performance.now() - start
          if (liveMs && (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200) {
            results.push({ liveMs, readyMs: performance.now() - start })
            break
          }
        } catch {
          // not listening yet
        }
        await new Promise((r) => setTimeout(r, 10))
      }
    } finally {
      child.kill('SIGKILL')
      await new Promise((r) => child.once('exit', r))
      await rm(dataDir, { recursive: true, force: true })
    }
  }
  const ready = results.map((r) => r.readyMs).sort((a, b) => a - b)
  return { runs: results, bestReadyMs: ready[0]!, medianReadyMs: ready[Math.floor(ready.length / 2)]! }
}
