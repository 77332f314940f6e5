import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { request } from 'node:http'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { completedTaskSchema, submitResponseSchema } from '@mos/sdk/contract'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { localServiceEnv } from '../../../test/support/service-env.ts'
import { API_KEY, fetchMos, form, tempDir, waitForTask } from './support/harness.ts'
import { startMos, stopMos, type MosProcess } from './support/processes.ts'

const RECORDER = fileURLToPath(new URL('./support/record-modules.mjs', import.meta.url))
const WORKSPACE_IMPORTS = fileURLToPath(new URL('../../../test/support/workspace-imports.mjs', import.meta.url))
const REPO = fileURLToPath(new URL('../../../', import.meta.url))
const { available, paths } = corpusFiles({ box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb') })

/** What the process and its threads loaded: a set of URLs/paths, and how many threads ran the recorder. */
async function loadedModules(log: string): Promise<{ modules: string[]; threads: number }> {
  const lines = (await readFile(log, 'utf8')).trim().split('\n')
  return {
    modules: lines.filter((line) => !line.startsWith('thread ')).map((line) => line.slice(4)),
    threads: new Set(lines.filter((line) => line.startsWith('thread '))).size,
  }
}

/** A TypeScript loader or a TypeScript source among loaded modules. */
const typescript = (modules: string[]) =>
  modules.filter((m) => /[\\/]node_modules[\\/](tsx|esbuild|get-tsconfig)[\\/]|\.[cm]?tsx?$/.test(m))

/** A GET through node:http, to read the header bytes as they came (latin1, as Node decodes them). */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; raw: string[]; body: Buffer }> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('end', () => resolve({ status: response.statusCode ?? 0, raw: response.rawHeaders, body: Buffer.concat(chunks) }))
    })
      .on('error', reject)
      .end()
  })
}

describe.skipIf(!available)('the production process (compiled, what `npm start` runs)', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let server: MosProcess | undefined
  let log: string

  beforeAll(async () => {
    dir = await tempDir()
    log = join(dir.path, 'modules.log')
    const env = { ...localServiceEnv({ variant: 'A', dataDir: join(dir.path, 'data'), apiKeys: API_KEY }), MOS_TEST_MODULE_LOG: log }
    server = await startMos('production', env, 60_000, { nodeArgs: ['--import', RECORDER] })
  })
  afterAll(async () => {
    await stopMos(server)
    await dir?.remove()
  })

  it('names a non-ASCII upload what was done, with an ASCII Content-Disposition and its UTF-8 form', async () => {
    const call = (path: string, init: RequestInit = {}) => fetchMos(server!, path, init)
    const bytes = new Uint8Array(await readFile(paths.box))
    const submitted = await call('/api/v1/compress', {
      method: 'POST',
      body: await form({ engine: 'draco' }, [{ name: 'my model ü.glb', bytes }]),
    })
    expect(submitted.status, await submitted.clone().text()).toBe(200)
    const { task_id } = submitResponseSchema.parse(await submitted.json())
    const completed = completedTaskSchema.parse(await waitForTask((p) => call(p), task_id))
    expect(completed.input_filename).toBe('my model ü.glb')
    expect(completed.output.filename).toBe('my model ü.draco.glb')

    const download = await rawGet(`${server!.url}/api/v1/tasks/${task_id}/download`, { 'X-API-Key': API_KEY })
    expect(download.status).toBe(200)
    expect(download.body.byteLength).toBe(completed.output.size_bytes)
    const disposition = download.raw[download.raw.findIndex((name) => name.toLowerCase() === 'content-disposition') + 1] ?? ''
    // Every byte of the header is printable ASCII: no raw 0xFC for the ü.
    expect([...disposition].filter((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) > 0x7e)).toEqual([])
    expect(disposition).toBe(`attachment; filename="my model u.draco.glb"; filename*=UTF-8''my%20model%20%C3%BC.draco.glb`)
    expect(decodeURIComponent(/filename\*=UTF-8''(\S+)/.exec(disposition)![1]!)).toBe(completed.output.filename)
  })

  it('plain Node imports @mos/sdk, @mos/sdk/node, @mos/sdk/contract and @mos/conformance by name and calls them', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [WORKSPACE_IMPORTS, server!.url, API_KEY], { cwd: REPO })
    const result = JSON.parse(stdout) as Record<string, unknown>
    expect(result).toMatchObject({
      variant: 'A',
      health: 'ok',
      missing: { sdkError: true, sameClass: true, message: 'task not found: no-such-task' },
      notFoundText: 'task not found: no-such-task',
      loader: [],
    })
    expect(result.checks).toBeGreaterThan(50)
    expect(result.conformance).toMatchObject({ fail: 0 })
    expect((result.conformance as { pass: number }).pass).toBeGreaterThanOrEqual(2)
  })

  it('loads no tsx and no TypeScript source, in the main thread nor in its engine threads', async () => {
    const { modules, threads } = await loadedModules(log)
    // The record covers the compiled entry and the engine threads (the task above ran in one).
    expect(modules).toContain(`file://${join(REPO, 'packages/server/dist/main.js')}`)
    expect(modules).toContain(`file://${join(REPO, 'packages/engines/dist/worker.js')}`)
    expect(threads).toBeGreaterThanOrEqual(2)
    expect(modules.some((m) => m.includes('/packages/sdk/dist/'))).toBe(true)
    expect(typescript(modules)).toEqual([])
    expect(modules.filter((m) => m.includes('/packages/') && m.includes('/src/'))).toEqual([])
  })

  it('the recorder sees tsx where it is loaded (the check above can fail)', async () => {
    const control = join(dir.path, 'control.log')
    await promisify(execFile)(process.execPath, ['--import', RECORDER, '--import', 'tsx', '-e', '0'], {
      cwd: REPO,
      env: { ...process.env, MOS_TEST_MODULE_LOG: control },
    })
    expect(typescript((await loadedModules(control)).modules).length).toBeGreaterThan(0)
  })
})
