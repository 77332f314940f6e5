import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { afterAll, beforeAll } from 'vitest'
import { localServiceEnv } from '../../../../test/support/service-env.ts'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import type { TaskRecord, Variant } from '@mos/sdk/contract'
import { createApp, createServiceContext, loadConfig, startServer, type RunningServer } from '../../src/index.ts'
import { until } from '../../../../test/support/poll.ts'

export const API_KEY = 'test-key-0123456789'
export const VARIANTS: Variant[] = ['A', 'B']

/** Files and folders under `folder`, relative, recursively, sorted; none when it does not exist. */
export async function tree(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true }).catch(() => [] as string[])
  return entries.map(String).sort()
}

/** Waits until an upload is on disk under `files` as an unfinished part file. */
export async function partFileOnDisk(files: string): Promise<void> {
  await until(
    () => tree(files),
    (entries) => entries.some((path) => path.endsWith('.part')),
    30_000,
    50,
  ).catch(async () => {
    throw new Error(`upload never reached the disk: ${(await tree(files)).join(', ')}`)
  })
}

/** A fresh data folder per test file. */
export async function tempDir(): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), 'mos-test-'))
  return { path, remove: () => rm(path, { recursive: true, force: true }) }
}

export function testEnv(variant: Variant, base: string, extra: Record<string, string> = {}): Record<string, string> {
  return localServiceEnv({ variant, dataDir: base, apiKeys: `${API_KEY},second-key`, extra })
}

/** `headers` with X-API-Key set to `key` (none when null). */
function withKey(headers: HeadersInit | undefined, key: string | null): Headers {
  const merged = new Headers(headers)
  if (key) merged.set('X-API-Key', key)
  return merged
}

/** A request to a running service (`startMos`, `realServer`) at `path`, with the key (none when null) over `init`'s headers. */
export function fetchMos(mos: { url: string }, path: string, init: RequestInit = {}, key: string | null = API_KEY): Promise<Response> {
  return fetch(`${mos.url}${path}`, { ...init, headers: withKey(init.headers, key) })
}

/** The app in-process: requests go through `app.fetch`, no port. */
export function inProcessApp(env: Record<string, string>) {
  const context = createServiceContext(loadConfig(env))
  const app = createApp(context)
  const call = (path: string, init: RequestInit = {}, key: string | null = API_KEY) =>
    app.fetch(new Request(`http://mos.test${path}`, { ...init, headers: withKey(init.headers, key) }))
  return { app, context, call, close: () => context.close({ drain: false }) }
}

/**
 * An in-process app over a fresh data folder for the enclosing describe block: created before its
 * tests, closed and removed after them.
 */
export function useInProcessApp(variant: Variant, extra: Record<string, string> = {}) {
  let app: ReturnType<typeof inProcessApp> | undefined
  let dir: Awaited<ReturnType<typeof tempDir>> | undefined
  beforeAll(async () => {
    dir = await tempDir()
    app = inProcessApp(testEnv(variant, dir.path, extra))
  })
  afterAll(async () => {
    await app?.close()
    await dir?.remove()
  })
  const current = () => {
    if (!app) throw new Error('useInProcessApp: used outside its describe block')
    return app
  }
  return {
    call: (...args: Parameters<ReturnType<typeof inProcessApp>['call']>) => current().call(...args),
    get context() {
      return current().context
    },
    /** The data folder, to start a second app on the same storage. */
    get dataDir() {
      if (!dir) throw new Error('useInProcessApp: used outside its describe block')
      return dir.path
    },
  }
}

/** A real listening server. */
export async function realServer(env: Record<string, string>): Promise<RunningServer & { call: typeof fetch }> {
  const server = await startServer({ env })
  const call = ((path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers)
    if (!headers.has('X-API-Key')) headers.set('X-API-Key', API_KEY)
    return fetch(`${server.url}${path}`, { ...init, headers })
  }) as typeof fetch
  return Object.assign(server, { call })
}

/** A multipart body with the given fields and files (path on disk, or bytes with a name). */
export async function form(
  fields: Record<string, string | number>,
  files: (string | { name: string; bytes: Uint8Array })[] = [],
  fileField = 'file',
): Promise<FormData> {
  const data = new FormData()
  for (const file of files) {
    const { name, bytes } = typeof file === 'string' ? { name: basename(file), bytes: new Uint8Array(await readFile(file)) } : file
    data.append(fileField, new Blob([bytes as Uint8Array<ArrayBuffer>]), name)
  }
  for (const [key, value] of Object.entries(fields)) data.append(key, String(value))
  return data
}

/** Polls a task until it is completed or failed. */
export async function waitForTask(
  get: (path: string) => Response | Promise<Response>,
  id: string,
  timeoutMs = 60_000,
): Promise<TaskRecord & Record<string, unknown>> {
  const read = async () => (await (await get(`/api/v1/tasks/${id}`)).json()) as TaskRecord & Record<string, unknown>
  const record = await until(read, (r) => r.status === 'completed' || r.status === 'failed', timeoutMs, 50)
  if (record.status !== 'completed' && record.status !== 'failed')
    throw new Error(`task ${id} still ${record.status} after ${timeoutMs} ms`)
  return record
}
