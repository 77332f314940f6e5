import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { throwAwayLicenceEnv } from '../test/support/service-env.ts'

export const BENCH_KEY = 'bench-key'

export interface BenchService {
  url: string
  pid: number
  /** Resident set size of the service process now, in bytes. */
  rss(): Promise<number>
  call(path: string, init?: RequestInit): Promise<Response>
  stop(): Promise<void>
}

/** Starts the real service (`npm start`'s entry) as a child process on a free port. */
export async function startBenchService(env: Record<string, string> = {}): Promise<BenchService> {
  const dataDir = await mkdtemp(join(tmpdir(), 'mos-bench-'))
  const port = 20000 + Math.floor(Math.random() * 20000)
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'packages/server/src/main.ts'], {
    cwd: new URL('..', import.meta.url).pathname,
    env: {
      ...process.env,
      SERVICE__SERVER__PORT: String(port),
      SERVICE__SERVER__HOST: '127.0.0.1',
      SERVICE__AUTH__API_KEYS: BENCH_KEY,
      SERVICE__STORAGE__FS__BASE: dataDir,
      // The benchmark measures the engine path, not the trial's file count or the per-key limit.
      ...throwAwayLicenceEnv('lic_bench'),
      SERVICE__SERVER__RATE_LIMIT_PER_MINUTE: '1000000',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let log = ''
  child.stdout!.on('data', (d) => (log += d))
  child.stderr!.on('data', (d) => (log += d))
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 30_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited: ${log}`)
    try {
      if ((await fetch(`${url}/api/v1/health`)).ok) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`service did not start: ${log}`)
    await new Promise((r) => setTimeout(r, 100))
  }
  return {
    url,
    pid: child.pid!,
    async rss() {
      const status = await readFile(`/proc/${child.pid}/status`, 'utf8')
      return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024
    },
    call(path, init = {}) {
      const headers = new Headers(init.headers)
      headers.set('X-API-Key', BENCH_KEY)
      return fetch(`${url}${path}`, { ...init, headers })
    },
    async stop() {
      child.kill('SIGKILL')
      await new Promise((r) => child.once('exit', r))
      await rm(dataDir, { recursive: true, force: true })
    },
  }
}

/** The JSON body of a 200, or an error naming the status and body: a benchmark must not spin on a 4xx. */
export async function expectOk(response: Response): Promise<unknown> {
  if (!response.ok) throw new Error(`${response.url}: ${response.status} ${await response.text()}`)
  return response.json()
}

/** Submits one file, polls to the end, downloads; returns the end-to-end time and the result bytes. */
export async function roundTrip(
  service: BenchService,
  file: { name: string; bytes: Uint8Array },
  fields: Record<string, string>,
  endpoint = '/api/v1/compress',
): Promise<{ ms: number; bytes: Uint8Array }> {
  const start = performance.now()
  const body = new FormData()
  body.append('file', new Blob([file.bytes as Uint8Array<ArrayBuffer>]), file.name)
  for (const [k, v] of Object.entries(fields)) body.append(k, v)
  const submitted = (await expectOk(await service.call(endpoint, { method: 'POST', body }))) as { task_id: string }
  // A fixed short poll: a growing back-off would add up to its last delay to every measured task.
  for (const delay = 5; ; ) {
    const record = (await expectOk(await service.call(`/api/v1/tasks/${submitted.task_id}`))) as { status: string; error?: string }
    if (record.status === 'failed') throw new Error(`task failed: ${record.error}`)
    if (record.status === 'completed') break
    await new Promise((r) => setTimeout(r, delay))
  }
  const bytes = new Uint8Array(await (await service.call(`/api/v1/tasks/${submitted.task_id}/download`)).arrayBuffer())
  return { ms: performance.now() - start, bytes }
}
