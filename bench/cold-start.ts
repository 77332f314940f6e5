import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BENCH_KEY } from './service.ts'

/**
 * The node arguments of `npm start` (root package.json), so the figure follows what operators run
 * (the TypeScript loader today, compiled output once the build lands); npm itself is left out.
 */
export function startCommand(): string[] {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts?: Record<string, string> }
  const start = pkg.scripts?.start ?? ''
  if (/^node\s/.test(start) && !/[&|;]/.test(start)) return start.split(/\s+/).slice(1)
  return ['--import', 'tsx', 'packages/server/src/main.ts']
}

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
export async function measureColdStart(runs: number, command: string[] = startCommand()): Promise<ColdStartResult> {
  const results: ColdStartResult['runs'] = []
  for (let i = 0; i < runs; i++) {
    const dataDir = await mkdtemp(join(tmpdir(), 'mos-cold-'))
    const port = 20000 + Math.floor(Math.random() * 20000)
    const start = performance.now()
    const child = spawn(process.execPath, command, {
      cwd: new URL('..', import.meta.url).pathname,
      env: {
        ...process.env,
        SERVICE__SERVER__PORT: String(port),
        SERVICE__SERVER__HOST: '127.0.0.1',
        SERVICE__AUTH__API_KEYS: BENCH_KEY,
        SERVICE__STORAGE__FS__BASE: dataDir,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
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
