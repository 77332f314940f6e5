import { spawn, type ChildProcess } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runtimeArgs, runtimeBinary } from '../../../../scripts/runtime-binary.mjs'

const REPO = fileURLToPath(new URL('../../../../', import.meta.url))
const MAIN = 'packages/server/dist/main.js'

export interface MosProcess {
  name: string
  pid: number
  port: number
  url: string
  child: ChildProcess
  /** Resolves with the exit code (or the signal's name) once the process has ended. */
  exited: Promise<number | string>
  /** Everything it printed so far. */
  output(): string
}

/** How to start it besides `env`. */
export interface StartMosOptions {
  /** Node options before the entry (e.g. a test-only `--import`); production passes none. */
  nodeArgs?: string[]
  /**
   * Working directory, where the server reads a `.env`. By default the system's temporary folder,
   * not the repository: a developer's own `.env` there must not change what the tests run.
   */
  cwd?: string
  /** The file Node runs, from the repository's root: `npm start`'s entry unless a test starts another (a bin). */
  entry?: string
  /**
   * The runtime that runs the entry (`npm run start:api:deno` / `start:api:bun` run the same binary
   * with the same arguments); `nodeArgs` apply to Node only. On workerd the API role is the Worker
   * bundle, started as `npm run start:api:workerd` starts it (`entry` does not apply).
   */
  runtime?: 'node' | 'deno' | 'bun' | 'workerd'
}

/** The command that starts `entry` on `runtime`, or an error naming the missing binary. */
function command(options: StartMosOptions): [string, string[]] {
  const entry = join(REPO, options.entry ?? MAIN)
  const runtime = options.runtime ?? 'node'
  if (runtime === 'node') return [process.execPath, [...(options.nodeArgs ?? []), entry]]
  if (runtime === 'workerd') return [process.execPath, [join(REPO, 'scripts/start-api.mjs'), 'workerd']]
  const binary = runtimeBinary(runtime)
  if (!binary) throw new Error(`no ${runtime} binary installed`)
  return [binary, runtimeArgs(runtime, entry)]
}

/**
 * Starts the compiled service from its real entry point (`node packages/server/dist/main.js`, what
 * `npm start` runs, built by the vitest global setup) with `env`, and resolves once it prints the
 * port it listens on.
 */
export async function startMos(
  name: string,
  env: Record<string, string>,
  timeoutMs = 60_000,
  options: StartMosOptions = {},
): Promise<MosProcess> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('SERVICE__')))
  const [binary, args] = command(options)
  const child = spawn(binary, args, {
    cwd: options.cwd ?? tmpdir(),
    env: { ...inherited, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let text = ''
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()))
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()))
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)))

  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start in ${timeoutMs} ms:\n${text}`)), timeoutMs)
    const check = () => {
      const match = /listening on http:\/\/[^\s:]+:(\d+)/.exec(text)
      if (match) {
        clearTimeout(timer)
        resolve(Number(match[1]))
      }
    }
    child.stdout!.on('data', check)
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`${name} exited (${code}) before listening:\n${text}`))
    })
  })
  return { name, pid: child.pid!, port, url: `http://127.0.0.1:${port}`, child, exited, output: () => text }
}

/** Stops a process (SIGTERM, then SIGKILL after `graceMs`) and waits for it to end. */
export async function stopMos(process_: MosProcess | undefined, graceMs = 30_000): Promise<void> {
  if (!process_ || process_.child.exitCode !== null || process_.child.signalCode !== null) return
  process_.child.kill('SIGTERM')
  const timer = setTimeout(() => process_.child.kill('SIGKILL'), graceMs)
  await process_.exited
  clearTimeout(timer)
}

/** Stops every process of a group, each with `graceMs` before SIGKILL, whether or not the others stop. */
export async function stopMosGroup(processes: (MosProcess | undefined)[], graceMs = 5000): Promise<void> {
  await Promise.allSettled(processes.map((process_) => stopMos(process_, graceMs)))
}

/**
 * Starts several processes at once. If one does not start, those that did are stopped before the
 * error is thrown, so a failed `beforeAll` leaves no server running.
 */
export async function startMosGroup(specs: [name: string, env: Record<string, string>][]): Promise<MosProcess[]> {
  const started = await Promise.allSettled(specs.map(([name, env]) => startMos(name, env)))
  const failure = started.find((result) => result.status === 'rejected')
  const running = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []))
  if (failure) {
    await stopMosGroup(running)
    throw failure.reason
  }
  return running
}

/** An API process and a worker process of one deployment (`env`, e.g. `sharedRedisEnv`'s), started together. */
export async function startApiAndWorker(env: Record<string, string>): Promise<[api: MosProcess, worker: MosProcess]> {
  return (await startMosGroup([
    ['api', { ...env, SERVICE__SERVER__ROLE: 'api' }],
    ['worker', { ...env, SERVICE__SERVER__ROLE: 'worker' }],
  ])) as [MosProcess, MosProcess]
}

/**
 * SERVICE__* settings of processes sharing one deployment through Redis: records in Redis, the
 * BullMQ queue, one engine thread each, loopback on a free port, no practical rate limit. Files go
 * to S3 when `s3` (a test S3 server's settings) is given, else to `<dataDir>/shared`.
 */
export function sharedRedisEnv(options: {
  redisUrl: string
  prefix: string
  dataDir: string
  s3?: Record<string, string>
  apiKeys: string
}): Record<string, string> {
  return {
    SERVICE__AUTH__API_KEYS: options.apiKeys,
    SERVICE__SERVER__HOST: '127.0.0.1',
    SERVICE__SERVER__PORT: '0',
    SERVICE__SERVER__RATE_LIMIT_PER_MINUTE: '1000000',
    SERVICE__STORAGE__DRIVER: 'redis',
    SERVICE__STORAGE__REDIS__URL: options.redisUrl,
    SERVICE__STORAGE__REDIS__PREFIX: options.prefix,
    ...(options.s3
      ? { SERVICE__STORAGE__FILES_DRIVER: 's3', SERVICE__STORAGE__FS__BASE: join(options.dataDir, 'local'), ...options.s3 }
      : { SERVICE__STORAGE__FILES_DRIVER: 'fs', SERVICE__STORAGE__FS__BASE: join(options.dataDir, 'shared') }),
    SERVICE__QUEUE__DRIVER: 'bullmq',
    SERVICE__QUEUE__PREFIX: options.prefix,
    SERVICE__ENGINES__THREADS: '1',
  }
}
