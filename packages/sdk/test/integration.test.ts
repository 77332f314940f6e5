import { readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { unzipSync } from 'fflate'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import {
  AuthenticationError,
  BadRequestError,
  completedTaskSchema,
  createClient,
  detectVariant,
  ERROR_TEXTS,
  NotFoundError,
  NotImplementedError,
  RateLimitError,
  VARIANT_SCHEMAS,
  type NodeClient,
  type TaskRecord,
  type Variant,
} from '../src/node.ts'
import { countTriangles, extensionsUsed, gltfReader } from './support/decode.ts'
import { API_KEY, loadStartServer, startRealServer } from './support/real-server.ts'

const corpus = corpusFiles({
  box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
  knight: shared('glb', 'chr_knight.glb'),
})
const server = await loadStartServer()
if (!server.startServer) console.warn(`[skip] SDK integration tests: ${server.reason}`)

async function inputTriangles(path: string): Promise<number> {
  return countTriangles(await (await gltfReader()).readBinary(new Uint8Array(await readFile(path))))
}

/** The document fits the contract's schema (which allows extra fields); on failure the message lists the issues. */
function expectShape(schema: { safeParse(value: unknown): { success: boolean; error?: unknown } }, value: unknown) {
  const result = schema.safeParse(value)
  expect(result.success, `${JSON.stringify(value)}\n${String(result.error)}`).toBe(true)
}

/** Whether an error says the route is not on this server yet (404 `not found: /api/v1/...`). */
const routeMissing = (error: unknown) => error instanceof NotFoundError && error.message.startsWith('not found: /api/v1/')

for (const variant of ['A', 'B'] as const satisfies Variant[]) {
  describe.skipIf(!server.startServer || !corpus.available)(`SDK against the real server, variant ${variant}`, () => {
    let running: Awaited<ReturnType<typeof startRealServer>>
    let client: NodeClient<typeof variant>

    beforeAll(async () => {
      running = await startRealServer(server.startServer!, variant)
      client = createClient({ baseURL: running.url, apiKey: API_KEY, variant })
    })
    afterAll(() => running?.close())

    it('detectVariant and the variant documents', async () => {
      expect(await detectVariant(running.url)).toBe(variant)
      const health = await client.health()
      expectShape(VARIANT_SCHEMAS[variant].health, health)
      expect('uptime_seconds' in health).toBe(variant === 'B')
      const capabilities = await client.capabilities()
      expectShape(VARIANT_SCHEMAS[variant].capabilities, capabilities)
    })

    for (const [name, engine] of [
      ['box', 'draco'],
      ['knight', 'meshopt'],
    ] as const) {
      it(`compress ${name} with ${engine} → wait with progress → download → decodes to the same triangles`, async () => {
        const seen: TaskRecord[] = []
        const task = await client.compressAndWait(
          { file: corpus.paths[name], engine },
          { pollIntervalMs: 20, onProgress: (record) => seen.push(record) },
        )
        expectShape(completedTaskSchema, task)
        expect(task.input_filename).toBe(`${name === 'box' ? 'BoxTextured' : 'chr_knight'}.glb`)
        expect(task.input_size_bytes).toBe((await stat(corpus.paths[name])).size)
        // Progress callbacks: at least the final one, statuses only move forward, progress never drops.
        expect(seen.at(-1)).toEqual(task)
        const order = ['pending', 'processing', 'completed']
        const ranks = seen.map((record) => order.indexOf(record.status))
        expect(ranks).toEqual([...ranks].sort())
        const progress = seen.map((record) => ('progress' in record ? record.progress : undefined) ?? 0)
        expect(progress).toEqual([...progress].sort((a, b) => a - b))

        const bytes = await client.download(task.task_id)
        expect(bytes.byteLength).toBe(task.output.size_bytes)
        const doc = await (await gltfReader()).readBinary(bytes)
        expect(extensionsUsed(doc)).toContain(engine === 'draco' ? 'KHR_draco_mesh_compression' : 'EXT_meshopt_compression')
        expect(countTriangles(doc)).toBe(await inputTriangles(corpus.paths[name]))
      })
    }

    it("reads what compress's steps did from the completed record, typed: merge and simplify, whose figures the download holds", async () => {
      const task = await client.compressAndWait({ file: corpus.paths.knight, engine: 'meshopt', merge: true, simplify_ratio: 0.5 })
      expectShape(completedTaskSchema, task)
      // Typed fields of the record (Mos extensions, task-reports.ts): no cast needed to read them.
      const { merge, simplify } = task
      expect(merge?.draw_calls_after).toBe(1)
      expect(simplify?.target_ratio).toBe(0.5)
      const doc = await (await gltfReader()).readBinary(await client.download(task.task_id))
      expect(simplify?.triangles_after).toBe(countTriangles(doc))
      expect(simplify!.triangles_after).toBeLessThan(simplify!.triangles_before)
      expect(simplify?.ratio).toBeCloseTo(simplify!.triangles_after / simplify!.triangles_before, 10)
    })

    it('waitForTask reports progress of a submitted task; downloadToFile writes the same bytes as download', async () => {
      const { task_id, status } = await client.compress({
        file: await readFile(corpus.paths.knight),
        filename: 'knight.glb',
        engine: 'draco',
        level: 10,
      })
      expect(status).toBe('pending')
      const statuses: string[] = []
      const done = await client.waitForTask(task_id, { pollIntervalMs: 10, onProgress: (record) => statuses.push(record.status) })
      expect(done.status).toBe('completed')
      // The first poll follows the submit at once, long before a level-10 Draco encode of the knight ends.
      expect(statuses[0]).toMatch(/^(pending|processing)$/)
      expect(statuses.at(-1)).toBe('completed')
      const target = join(running.dir, 'downloaded.glb')
      const { bytes } = await client.downloadToFile(task_id, target)
      expect(new Uint8Array(await readFile(target))).toEqual(await client.download(task_id))
      expect(bytes).toBe(done.status === 'completed' ? done.output.size_bytes : -1)
    })

    it('HTTP errors of the real server arrive as the matching classes with the contract texts', async () => {
      const wrongKey = createClient({ baseURL: running.url, apiKey: 'wrong', variant })
      await expect(wrongKey.getTask('x')).rejects.toSatisfy(
        (e) => e instanceof AuthenticationError && e.message === ERROR_TEXTS.unauthorized(),
      )
      await expect(client.getTask('no-such-task')).rejects.toSatisfy(
        (e) => e instanceof NotFoundError && e.message === ERROR_TEXTS.taskNotFound('no-such-task'),
      )
      const bad = client.compress({ file: corpus.paths.box, engine: 'zstd' as 'draco' })
      await expect(bad).rejects.toBeInstanceOf(BadRequestError)
      await expect(client.compress({ file: new Uint8Array(8), filename: 'notes.txt', engine: 'draco' })).rejects.toSatisfy(
        (e) => e instanceof BadRequestError && e.message === ERROR_TEXTS.unsupportedFormat('txt'),
      )
    })

    if (variant === 'B') {
      it('diagnose and ktx2 are reserved in B: NotImplementedError', async () => {
        await expect(client.diagnose({ file: corpus.paths.box })).rejects.toBeInstanceOf(NotImplementedError)
        await expect(client.encodeKtx2({ file: corpus.paths.box })).rejects.toBeInstanceOf(NotImplementedError)
      })
    }

    // Endpoints that land on the server later: each test skips, saying so, while its route is missing.
    it('repair → download decodes', async (ctx) => {
      const task = await client
        .repairAndWait({ file: corpus.paths.box }, { pollIntervalMs: 20 })
        .catch((e) => (routeMissing(e) ? ctx.skip('POST /repair is not on the server yet') : Promise.reject(e)))
      const doc = await (await gltfReader()).readBinary(await client.download(task.task_id))
      expect(countTriangles(doc)).toBeGreaterThan(0)
    })

    it('convert glb → obj', async (ctx) => {
      const task = await client
        .convertAndWait({ file: corpus.paths.box, target_format: 'obj' }, { pollIntervalMs: 20 })
        .catch((e) => (routeMissing(e) ? ctx.skip('POST /convert is not on the server yet') : Promise.reject(e)))
      // A textured model's OBJ comes as a zip of model.obj, model.mtl and the texture.
      const files = unzipSync(await client.download(task.task_id))
      expect(Object.keys(files).sort()).toEqual(['model.mtl', 'model.obj', 'texture.png'])
      const text = new TextDecoder().decode(files['model.obj'])
      expect(text).toMatch(/^mtllib model\.mtl$/m)
      expect(text).toMatch(/^v\s/m)
      expect(text).toMatch(/^f\s/m)
    })

    it('batchCompress → waitForBatch → every sub-task downloads', async (ctx) => {
      const submitted = await client
        .batchCompress({ files: [corpus.paths.box, corpus.paths.knight], engine: 'draco' })
        .catch((e) => (routeMissing(e) ? ctx.skip('POST /batch/compress is not on the server yet') : Promise.reject(e)))
      expect(submitted.total).toBe(2)
      expect(submitted.tasks.map((t) => t.filename)).toEqual(['BoxTextured.glb', 'chr_knight.glb'])
      const batch = await client.waitForBatch(submitted.batch_id, { pollIntervalMs: 20 })
      expect(batch).toMatchObject({ status: 'completed', total: 2, completed: 2, failed: 0 })
      for (const sub of batch.tasks) expect((await client.download(sub.task_id)).byteLength).toBeGreaterThan(0)
    })

    it("batchCompress with compress's Mos fields (simplify_ratio, merge): each sub-task applies them", async () => {
      const submitted = await client.batchCompress({
        files: [corpus.paths.knight, corpus.paths.box],
        engine: 'meshopt',
        merge: true,
        simplify_ratio: 0.5,
      })
      const batch = await client.waitForBatch(submitted.batch_id, { pollIntervalMs: 20 })
      expect(batch).toMatchObject({ status: 'completed', total: 2, completed: 2, failed: 0 })
      const knight = await client.getTask(batch.tasks[0]!.task_id)
      if (knight.status !== 'completed') expect.fail(`the knight's task is ${knight.status}`)
      const simplify = knight.simplify!
      expect(simplify.target_ratio).toBe(0.5)
      expect(knight.merge?.draw_calls_after).toBe(1)
      expect(simplify.triangles_after).toBeLessThan(simplify.triangles_before)
      for (const sub of batch.tasks) {
        const doc = await (await gltfReader()).readBinary(await client.download(sub.task_id))
        expect(extensionsUsed(doc), sub.filename).toContain('EXT_meshopt_compression')
        if (sub.task_id === knight.task_id) expect(countTriangles(doc)).toBe(simplify.triangles_after)
      }
    })

    it('license info', async (ctx) => {
      const info = await client
        .licenseInfo()
        .catch((e) => (routeMissing(e) ? ctx.skip('GET /license/info is not on the server yet') : Promise.reject(e)))
      expectShape(VARIANT_SCHEMAS[variant].licenseInfo, info)
    })

    it('metrics', async (ctx) => {
      const metrics = await client
        .metrics()
        .catch((e) => (routeMissing(e) ? ctx.skip('GET /metrics is not on the server yet') : Promise.reject(e)))
      expect(metrics).toContain(variant === 'A' ? 'service_tasks_total' : 'service_requests_total')
    })
  })
}

describe.skipIf(!server.startServer)('rate limit of the real server (variant A)', () => {
  it('the request over the limit is a RateLimitError with the X-RateLimit headers', async (ctx) => {
    const running = await startRealServer(server.startServer!, 'A', { SERVICE__SERVER__RATE_LIMIT_PER_MINUTE: '3' })
    try {
      const client = createClient({ baseURL: running.url, apiKey: API_KEY, maxRetries: 0 })
      const errors: unknown[] = []
      for (let i = 0; i < 5; i++) await client.capabilities().catch((e) => errors.push(e))
      if (errors.length === 0) return ctx.skip('the server does not rate-limit yet')
      const error = errors[0]
      expect(error).toBeInstanceOf(RateLimitError)
      expect((error as RateLimitError).message).toBe(ERROR_TEXTS.rateLimited(3))
      expect(Number((error as RateLimitError).headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000 - 1)
    } finally {
      await running.close()
    }
  })
})
