import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { throwAwayLicenceEnv } from '../test/support/service-env.ts'
import { createBenchClient, type BenchClient } from './client.ts'

export const BENCH_KEY = 'bench-key'

export interface BenchService {
  url: string
  pid: number
  /** Resident set size of the service process now, in bytes. */
  rss(): Promise<number>
  call(path: string, init?: RequestInit): Promise<Response>
  /** The lean client the measured paths use (see client.ts). */
  client: BenchClient
  stop(): Promise<void>
}

/**
 * The node arguments of `npm start` (root package.json): every section measures the compiled
 * service operators run (`npm run bench` builds what is stale first, as `npm start` does).
 */
export function startCommand(): string[] {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts?: Record<string, string> }
  const start = pkg.scripts?.start ?? ''
  if (!/^node\s/.test(start) || /[&|;]/.test(start)) throw new Error(`npm start is not a plain node command: ${start}`)
  return start.split(/\s+/).slice(1)
}

/** Spawns the service (`npm start`'s command) on `port` over the data folder `dataDir`, with `env` on top. */
export function spawnService(port: number, dataDir: string, env: Record<string, string>, stdio: StdioOptions): ChildProcess {
  return spawn(process.execPath, startCommand(), {
    cwd: new URL('..', import.meta.url).pathname,
    env: {
      ...process.env,
      SERVICE__SERVER__PORT: String(port),
      SERVICE__SERVER__HOST: '127.0.0.1',
      SERVICE__AUTH__API_KEYS: BENCH_KEY,
      SERVICE__STORAGE__FS__BASE: dataDir,
      ...env,
    },
    stdio,
  })
}

/** Starts the real service (`npm start`'s command) as a child process on a free port. */
export async function startBenchService(env: Record<string, string> = {}): Promise<BenchService> {
  const dataDir = await mkdtemp(join(tmpdir(), 'mos-bench-'))
  const port = 20000 + Math.floor(Math.random() * 20000)
  const child = spawnService(
    port,
    dataDir,
    {
      // The benchmark measures the engine path, not the trial's file count or the per-key limit.
      ...throwAwayLicenceEnv('lic_bench'),
      SERVICE__SERVER__RATE_LIMIT_PER_MINUTE: '1000000',
      ...env,
    },
    ['ignore', 'pipe', 'pipe'],
  )
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
  const client = createBenchClient(url, BENCH_KEY)
  return {
    url,
    pid: child.pid!,
    client,
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
      client.close()
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

/** Where a round trip's time went: the upload, the task's processing (from its record), the download. */
export interface RoundTrip {
  ms: number
  uploadMs: number
  processingMs: number
  downloadMs: number
  bytes: Uint8Array
}

/** Submits one file, polls to the end, downloads; returns the end-to-end time and the result bytes. */
export async function roundTrip(
  service: BenchService,
  file: { name: string; bytes: Uint8Array },
  fields: Record<string, string>,
  endpoint = '/api/v1/compress',
): Promise<RoundTrip> {
  const start = performance.now()
  const taskId = await service.client.submit(endpoint, file, fields)
  const uploaded = performance.now()
  const record = await waitForTask(service, taskId)
  const waited = performance.now()
  const bytes = await service.client.download(`/api/v1/tasks/${taskId}/download`)
  const end = performance.now()
  return {
    ms: end - start,
    uploadMs: uploaded - start,
    processingMs: Date.parse(record.completed_at!) - Date.parse(record.started_at!),
    downloadMs: end - waited,
    bytes,
  }
}

interface TaskRecord {
  status: string
  error?: string
  started_at?: string
  completed_at?: string
}

/**
 * Waits for one task to end with the service's long poll (`?wait=`, docs/api.md), as the SDK waits on
 * a Mos service: answered the moment the task ends, with no request in between. A fixed 5 ms poll did
 * this before, and with a batch of 24 tasks that was some 4 800 requests a second to the two cores
 * doing the work.
 */
export async function waitForTask(service: BenchService, taskId: string): Promise<TaskRecord> {
  for (;;) {
    const record = (await service.client.json(`/api/v1/tasks/${taskId}?wait=60`)) as TaskRecord
    if (record.status === 'failed') throw new Error(`task failed: ${record.error}`)
    if (record.status === 'completed') return record
  }
}
