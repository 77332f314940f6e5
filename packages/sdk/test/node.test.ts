import { getEventListeners } from 'node:events'
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { http, HttpResponse } from 'msw'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { ConflictError, createClient, fileFromPath, InvalidUploadError, MosError, TimeoutError, UserAbortError } from '../src/node.ts'
import { API, BASE, KEY, mockServer } from './support/fixtures.ts'

const server = mockServer()
let dir: string
beforeAll(async () => {
  server.listen({ onUnhandledRequest: 'error' })
  dir = await mkdtemp(join(tmpdir(), 'mos-sdk-node-'))
})
afterEach(() => server.resetHandlers())
afterAll(async () => {
  server.close()
  await rm(dir, { recursive: true, force: true })
})

const corpus = corpusFiles({ box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb') })
const client = createClient({ baseURL: BASE, apiKey: KEY, maxRetries: 0 })

function captureUpload() {
  const seen: { name?: string; bytes?: Uint8Array } = {}
  server.use(
    http.post(`${API}/compress`, async ({ request }) => {
      const file = (await request.formData()).get('file') as File
      seen.name = file.name
      seen.bytes = new Uint8Array(await file.arrayBuffer())
      return HttpResponse.json({ task_id: 't1', status: 'pending' })
    }),
  )
  return seen
}

describe.skipIf(!corpus.available)('@mos/sdk/node uploads', () => {
  const original = () => new Uint8Array(readFileSync(corpus.paths.box))

  it('from a path, named after the file', async () => {
    const seen = captureUpload()
    await client.compress({ file: corpus.paths.box, engine: 'draco' })
    expect(seen.name).toBe('BoxTextured.glb')
    expect(seen.bytes).toEqual(original())
  })

  it('from a file: URL, with a name override', async () => {
    const seen = captureUpload()
    await client.compress({ file: new URL(`file://${corpus.paths.box}`), filename: 'renamed.glb', engine: 'draco' })
    expect(seen.name).toBe('renamed.glb')
    expect(seen.bytes).toEqual(original())
  })

  it('from an fs.ReadStream, named after its path', async () => {
    const seen = captureUpload()
    await client.compress({ file: createReadStream(corpus.paths.box), engine: 'meshopt' })
    expect(seen.name).toBe('BoxTextured.glb')
    expect(seen.bytes).toEqual(original())
  })

  it('from any Node Readable with a filename', async () => {
    const seen = captureUpload()
    await client.compress({ file: Readable.from([Buffer.from(original())]), filename: 'piped.glb', engine: 'draco' })
    expect(seen.name).toBe('piped.glb')
    expect(seen.bytes).toEqual(original())
  })

  it('from a Buffer, and fileFromPath for batches', async () => {
    const seen = captureUpload()
    await client.compress({ file: readFileSync(corpus.paths.box), filename: 'buffer.glb', engine: 'draco' })
    expect(seen.bytes).toEqual(original())
    let names: string[] = []
    server.use(
      http.post(`${API}/batch/compress`, async ({ request }) => {
        names = (await request.formData()).getAll('files').map((file) => (file as File).name)
        return HttpResponse.json({ batch_id: 'b', total: 2, tasks: [] })
      }),
    )
    await client.batchCompress({ files: [corpus.paths.box, await fileFromPath(corpus.paths.box, 'copy.glb')], engine: 'draco' })
    expect(names).toEqual(['BoxTextured.glb', 'copy.glb'])
  })

  it('a missing path, or a folder, rejects with InvalidUploadError before any request', async () => {
    const missing = await client.compress({ file: join(dir, 'nope.glb'), engine: 'draco' }).catch((caught: unknown) => caught)
    expect(missing).toBeInstanceOf(InvalidUploadError)
    expect(missing).toBeInstanceOf(MosError)
    expect(missing).toMatchObject({ code: 'ENOENT', status: undefined, message: expect.stringContaining(join(dir, 'nope.glb')) })
    const folder = await client.compress({ file: dir, engine: 'draco' }).catch((caught: unknown) => caught)
    expect(folder).toBeInstanceOf(InvalidUploadError)
    expect((folder as Error).message).toBe(`[mos] not a file: ${dir}`)
  })
})

/** Resolves once `ready()` holds, checking every 10 ms. */
async function waitFor(ready: () => boolean): Promise<void> {
  while (!ready()) await new Promise((resolve) => setTimeout(resolve, 10))
}

describe('downloadToFile', () => {
  it('streams the result to disk and leaves no partial file', async () => {
    const bytes = new Uint8Array(300_000).map((_, i) => (i * 7) % 256)
    server.use(
      http.get(`${API}/tasks/t1/download`, () => new HttpResponse(bytes, { headers: { 'content-type': 'application/octet-stream' } })),
    )
    const target = join(dir, 'out.glb')
    expect(await client.downloadToFile('t1', target)).toEqual({ path: target, bytes: bytes.length })
    expect(new Uint8Array(readFileSync(target))).toEqual(bytes)
    expect(await readdir(dir)).toEqual(['out.glb'])
  })

  it('a folder that does not exist: the error, no partial file', async () => {
    server.use(http.get(`${API}/tasks/t1/download`, () => new HttpResponse(new Uint8Array(10))))
    await expect(client.downloadToFile('t1', join(dir, 'missing', 'out.glb'))).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('an abort while the body streams: UserAbortError, no partial file, no listener left on the signal', async () => {
    // One chunk, then a body that never ends: the abort must come while the file is being written.
    server.use(
      http.get(
        `${API}/tasks/t1/download`,
        () => new HttpResponse(new ReadableStream({ start: (controller) => controller.enqueue(new Uint8Array(1000).fill(7)) })),
      ),
    )
    const controller = new AbortController()
    const target = join(dir, 'aborted.glb')
    const download = client.downloadToFile('t1', target, { signal: controller.signal })
    await waitFor(() => existsSync(`${target}.part`) && statSync(`${target}.part`).size > 0)
    controller.abort()
    await expect(download).rejects.toBeInstanceOf(UserAbortError)
    expect(existsSync(target) || existsSync(`${target}.part`)).toBe(false)
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
  })

  it('a server that stops sending mid-body: TimeoutError after the per-attempt timeout, no partial file', async () => {
    server.use(
      http.get(
        `${API}/tasks/t1/download`,
        () => new HttpResponse(new ReadableStream({ start: (controller) => controller.enqueue(new Uint8Array(1000).fill(7)) })),
      ),
    )
    const target = join(dir, 'stalled.glb')
    const error = await client.downloadToFile('t1', target, { timeout: 300 }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(TimeoutError)
    expect((error as Error).message).toBe('the answer stalled: no data for 300 ms')
    expect(existsSync(target) || existsSync(`${target}.part`)).toBe(false)
  })

  it('a finished download leaves no listener on a long-lived signal (one per download would pile up)', async () => {
    server.use(http.get(`${API}/tasks/t1/download`, () => new HttpResponse(new Uint8Array(5000).fill(3))))
    const signal = new AbortController().signal
    for (let i = 0; i < 3; i++) await client.downloadToFile('t1', join(dir, 'each.glb'), { signal })
    expect(readFileSync(join(dir, 'each.glb'))).toEqual(Buffer.alloc(5000, 3))
    expect(getEventListeners(signal, 'abort')).toHaveLength(0)
    await rm(join(dir, 'each.glb'))
  })

  it('an HTTP error creates no file', async () => {
    server.use(
      http.get(`${API}/tasks/t2/download`, () =>
        HttpResponse.json({ error: 'task t2 is pending: no result to download' }, { status: 409 }),
      ),
    )
    const target = join(dir, 'never.glb')
    await expect(client.downloadToFile('t2', target)).rejects.toBeInstanceOf(ConflictError)
    expect(existsSync(target) || existsSync(`${target}.part`)).toBe(false)
  })
})
