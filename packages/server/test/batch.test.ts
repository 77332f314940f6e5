import { join } from 'node:path'
import { batchRecordSchema, batchSubmitResponseSchema, ERROR_TEXTS, type BatchRecord, type Variant } from '@mos/sdk/contract'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { until } from '../../../test/support/poll.ts'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import { fetchMos, form, useInProcessApp, inProcessApp, realServer, tempDir, testEnv, VARIANTS, waitForTask } from './support/harness.ts'
import { startMosGroup, stopMosGroup, type MosProcess } from './support/processes.ts'

const { available, paths } = corpusFiles({
  box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
  engine: assimp('glTF2', '2CylinderEngine-glTF-Binary', '2CylinderEngine.glb'),
  knight: shared('glb', 'chr_knight.glb'),
})
const broken = { name: 'broken.glb', bytes: new Uint8Array(20_000).map((_, i) => (i * 7919 + 13) % 251) }

async function waitForBatch(get: (path: string) => Response | Promise<Response>, id: string, timeoutMs = 120_000): Promise<BatchRecord> {
  const read = async () => batchRecordSchema.parse(await (await get(`/api/v1/batch/${id}`)).json())
  const record = await until(read, (r) => r.status !== 'processing', timeoutMs)
  if (record.status === 'processing') throw new Error(`batch ${id} still processing after ${timeoutMs} ms`)
  return record
}

describe.skipIf(!available)('batch compress on a real server (variant A)', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let server: Awaited<ReturnType<typeof realServer>>

  beforeAll(async () => {
    dir = await tempDir()
    server = await realServer(testEnv('A', dir.path))
  })
  afterAll(async () => {
    await server.close({ drain: false })
    await dir.remove()
  })

  it('runs real files with a broken one among them: the others complete and download, the batch ends partially_failed', async () => {
    const files = [paths.box, paths.engine, broken, paths.knight]
    const response = await server.call('/api/v1/batch/compress', {
      method: 'POST',
      body: await form({ engine: 'draco', level: 7 }, files, 'files'),
    })
    expect(response.status).toBe(200)
    const submitted = batchSubmitResponseSchema.parse(await response.json())
    expect(submitted.total).toBe(4)
    expect(submitted.tasks.map((t) => t.filename)).toEqual(['BoxTextured.glb', '2CylinderEngine.glb', 'broken.glb', 'chr_knight.glb'])
    expect(new Set(submitted.tasks.map((t) => t.task_id)).size).toBe(4)

    const early = batchRecordSchema.parse(await (await server.call(`/api/v1/batch/${submitted.batch_id}`)).json())
    expect(early.total).toBe(4)
    expect(early.completed + early.failed).toBeLessThanOrEqual(4)

    const done = await waitForBatch(server.call, submitted.batch_id)
    expect(done).toMatchObject({ batch_id: submitted.batch_id, status: 'partially_failed', total: 4, completed: 3, failed: 1 })
    expect(done.tasks.map((t) => t.status)).toEqual(['completed', 'completed', 'failed', 'completed'])

    // Every sub-task is an ordinary task: its record and download work on their own.
    const brokenRecord = await waitForTask(server.call, submitted.tasks[2]!.task_id)
    expect(brokenRecord).toMatchObject({ status: 'failed', input_filename: 'broken.glb' })
    expect(String(brokenRecord.error)).toMatch(/not a GLB file/)
    for (const index of [0, 1, 3]) {
      const task = submitted.tasks[index]!
      const record = await waitForTask(server.call, task.task_id)
      expect(record).toMatchObject({ status: 'completed', type: 'compress', input_filename: task.filename })
      const download = await server.call(`/api/v1/tasks/${task.task_id}/download`)
      expect(download.status).toBe(200)
      const bytes = new Uint8Array(await download.arrayBuffer())
      expect(bytes.byteLength).toBe((record.output as { size_bytes: number }).size_bytes)
      // A GLB whose JSON names the Draco extension: it was compressed, not copied.
      const json = JSON.parse(new TextDecoder().decode(bytes.subarray(20, 20 + new DataView(bytes.buffer).getUint32(12, true))))
      expect(json.extensionsUsed).toContain('KHR_draco_mesh_compression')
    }
  })
})

describe.skipIf(!available).each(VARIANTS)('batch compress rules in variant %s', (variant) => {
  const service = useInProcessApp(variant)

  const batch = async (fields: Record<string, string | number>, files: Parameters<typeof form>[1]) =>
    service.call('/api/v1/batch/compress', { method: 'POST', body: await form(fields, files, 'files') })

  it('ends failed when every file fails, completed when none does', async () => {
    const allBroken = batchSubmitResponseSchema.parse(
      await (await batch({ engine: 'meshopt' }, [broken, { ...broken, name: 'again.glb' }])).json(),
    )
    expect(await waitForBatch(service.call, allBroken.batch_id)).toMatchObject({ status: 'failed', total: 2, completed: 0, failed: 2 })
    const fine = batchSubmitResponseSchema.parse(await (await batch({ engine: 'meshopt', level: 10 }, [paths.box, paths.knight])).json())
    expect(await waitForBatch(service.call, fine.batch_id)).toMatchObject({ status: 'completed', total: 2, completed: 2, failed: 0 })
  })

  it('refuses the whole batch for one unsupported extension, naming it', async () => {
    const response = await batch({ engine: 'draco' }, [paths.box, { name: 'notes.txt', bytes: new TextEncoder().encode('hello') }])
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual({ error: ERROR_TEXTS.unsupportedFormat('txt') })
  })

  it.each([
    ['no files', {}, [], ERROR_TEXTS.missingField('files')],
    ['no engine', {}, ['box'], ERROR_TEXTS.missingField('engine')],
    [
      'level 0 (1..10 in both variants)',
      { engine: 'draco', level: 0 },
      ['box'],
      ERROR_TEXTS.invalidField('level', 'must be an integer from 1 to 10'),
    ],
  ])('answers 400 for %s', async (_label, fields, files, error) => {
    const response = await batch(
      fields as Record<string, string>,
      (files as string[]).map(() => paths.box),
    )
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual({ error })
  })

  it('answers 404 for an unknown batch', async () => {
    const response = await service.call('/api/v1/batch/00000000-0000-0000-0000-000000000000')
    expect(response.status).toBe(404)
    expect(await response.json()).toEqual({ error: ERROR_TEXTS.batchNotFound('00000000-0000-0000-0000-000000000000') })
    expect((await service.call('/api/v1/batch/abc', {}, null)).status).toBe(401)
  })

  it('survives a restart: the batch record is in storage', async () => {
    const submitted = batchSubmitResponseSchema.parse(await (await batch({ engine: 'draco' }, [paths.box])).json())
    await waitForBatch(service.call, submitted.batch_id)
    const again = inProcessApp(testEnv(variant, service.dataDir))
    try {
      expect(batchRecordSchema.parse(await (await again.call(`/api/v1/batch/${submitted.batch_id}`)).json()).status).toBe('completed')
    } finally {
      await again.close()
    }
  })
})

describe.skipIf(!available)('batch fields take the rules of /compress, on the compiled server', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  const servers = new Map<Variant, MosProcess>()
  beforeAll(async () => {
    dir = await tempDir()
    const started = await startMosGroup(VARIANTS.map((variant) => [`batch-fields-${variant}`, testEnv(variant, join(dir.path, variant))]))
    for (const [index, variant] of VARIANTS.entries()) servers.set(variant, started[index]!)
  }, 120_000)
  afterAll(async () => {
    await stopMosGroup([...servers.values()])
    await dir.remove()
  })

  describe.each(VARIANTS)('variant %s', (variant) => {
    const post = async (path: string, fields: Record<string, string>, fileField: string) =>
      fetchMos(servers.get(variant)!, `/api/v1${path}`, { method: 'POST', body: await form(fields, [paths.box], fileField) })

    it.each<Record<string, string>>([
      { engine: 'draco', position_quantization_bits: '30' },
      { engine: 'meshopt', meshopt_compression_level: 'ultra' },
      { engine: 'draco', simplify_ratio: '5' },
      { engine: 'draco', meshopt_compression_level: 'low' },
      { engine: 'meshopt', texture_max_size: '8' },
      { engine: 'meshopt', preset: 'tiny' },
      { engine: 'meshopt', texture_format: 'ktx2', texture_quality: '90' },
      { engine: 'draco', texture_format: 'webp', texture_progressive_jpeg: 'true' },
    ])('refuses %o with the text /compress gives', async (fields) => {
      const single = await post('/compress', fields, 'file')
      expect(single.status).toBe(400)
      const text = (await single.json()) as { error: string }
      expect(text.error).toMatch(/^invalid value for \w+: /)
      const batch = await post('/batch/compress', fields, 'files')
      expect(batch.status).toBe(400)
      expect(await batch.json()).toEqual(text)
    })

    it('keeps level at 1 to 10 in both variants (4.11)', async () => {
      const batch = await post('/batch/compress', { engine: 'draco', level: '0' }, 'files')
      expect(batch.status).toBe(400)
      expect(await batch.json()).toEqual({ error: ERROR_TEXTS.invalidField('level', 'must be an integer from 1 to 10') })
    })

    it('applies a valid extension field to every task of the batch, as /compress does', async () => {
      const response = await post('/batch/compress', { engine: 'meshopt', simplify_ratio: '0.5' }, 'files')
      expect(response.status, await response.clone().text()).toBe(200)
      const { tasks } = batchSubmitResponseSchema.parse(await response.json())
      const record = await waitForTask((path) => fetchMos(servers.get(variant)!, path), tasks[0]!.task_id)
      expect(record.status).toBe('completed')
      expect(record.simplify).toMatchObject({ target_ratio: 0.5 })
    })
  })
})
