import { readFile } from 'node:fs/promises'
import { loadPlatform, type Platform } from '@mos/engines'
import { completedTaskSchema, failedTaskSchema, submitResponseSchema } from '@mos/sdk/contract'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import { expectSameGeometry } from '../../../test/support/geometry.ts'
import { embeddedGltf } from '../../../test/support/gltf-fixtures.ts'
import { form, realServer, tempDir, testEnv, waitForTask } from './support/harness.ts'

const { available, paths } = corpusFiles({
  engine: assimp('glTF2', '2CylinderEngine-glTF-Binary', '2CylinderEngine.glb'),
  box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
  knight: shared('glb', 'chr_knight.glb'),
  pirate: shared('glb', 'pirate-meshopt.glb'),
  boxEmbedded: assimp('glTF2', 'BoxTextured-glTF-Embedded', 'BoxTextured.gltf'),
  gltf1: assimp('glTF', 'BoxTextured-glTF-Embedded', 'BoxTextured.gltf'),
})
const broken = corpusFiles({
  indexOutOfRange: assimp('glTF2', 'IndexOutOfRange', 'IndexOutOfRange.gltf'),
  incorrectVertexArrays: assimp('glTF2', 'IncorrectVertexArrays', 'Cube.gltf'),
  missingBin: assimp('glTF2', 'MissingBin', 'BoxTextured.gltf'),
  externalBin: assimp('glTF2', 'BoxTextured-glTF', 'BoxTextured.gltf'),
})

describe.skipIf(!available || !broken.available)('end to end over HTTP (variant A, fs storage)', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let server: Awaited<ReturnType<typeof realServer>>
  let platform: Platform

  beforeAll(async () => {
    dir = await tempDir()
    server = await realServer(testEnv('A', dir.path))
    platform = await loadPlatform()
  })
  afterAll(async () => {
    await server?.close()
    await dir.remove()
  })

  const submit = async (path: string, fields: Record<string, string | number>) => {
    const response = await server.call('/api/v1/compress', { method: 'POST', body: await form(fields, [path]) })
    expect(response.status).toBe(200)
    return submitResponseSchema.parse(await response.json()).task_id
  }

  for (const name of ['engine', 'box', 'knight', 'pirate', 'boxEmbedded'] as const) {
    for (const engine of ['draco', 'meshopt'] as const) {
      it(`compresses ${name} with ${engine}: the download decodes to the same triangles and bounds`, async () => {
        const id = await submit(paths[name], { engine })
        const record = completedTaskSchema.parse(await waitForTask(server.call, id))
        const response = await server.call(`/api/v1/tasks/${id}/download`)
        expect(response.status).toBe(200)
        const bytes = new Uint8Array(await response.arrayBuffer())
        expect(bytes.byteLength).toBe(record.output.size_bytes)
        expect(Number(response.headers.get('content-length'))).toBe(bytes.byteLength)

        const inputBytes = new Uint8Array(await readFile(paths[name]))
        const input =
          name === 'boxEmbedded'
            ? await platform.io.readJSON({ json: JSON.parse(new TextDecoder().decode(inputBytes)), resources: {} })
            : await platform.io.readBinary(inputBytes)
        const output = await platform.io.readBinary(bytes)
        const extension = engine === 'draco' ? 'KHR_draco_mesh_compression' : 'EXT_meshopt_compression'
        expect(
          output
            .getRoot()
            .listExtensionsUsed()
            .map((e) => e.extensionName),
        ).toContain(extension)
        expectSameGeometry(input, output)
        expect(record.output.compression_ratio).toBeCloseTo(bytes.byteLength / inputBytes.byteLength, 3)
      })
    }
  }

  it("compresses glTF 1.0 (collada2gltf's embedded BoxTextured) into glTF 2.0 that draws the 2.0 sample's triangles, and the record says what 2.0 does not carry", async () => {
    const id = await submit(paths.gltf1, { engine: 'meshopt' })
    const record = completedTaskSchema.parse(await waitForTask(server.call, id))
    expect(record.warnings).toContainEqual(expect.stringContaining('1 technique (GLSL shaders) not carried'))
    const output = await platform.io.readBinary(new Uint8Array(await (await server.call(`/api/v1/tasks/${id}/download`)).arrayBuffer()))
    expect(output.getRoot().getAsset().version).toBe('2.0')
    const sample = await platform.io.readJSON({ json: JSON.parse(await readFile(paths.boxEmbedded, 'utf8')), resources: {} })
    expectSameGeometry(sample, output)
    expect(output.getRoot().listTextures()).toHaveLength(1)
  })

  it('maps the compress fields to the encoders: fewer position bits give a smaller file', async () => {
    const sizes: number[] = []
    for (const bits of [16, 10]) {
      const id = await submit(paths.engine, { engine: 'draco', position_quantization_bits: bits })
      sizes.push(completedTaskSchema.parse(await waitForTask(server.call, id)).output.size_bytes)
    }
    expect(sizes[1]).toBeLessThan(sizes[0]!)
    const levels: number[] = []
    for (const level of ['low', 'high']) {
      const id = await submit(paths.engine, { engine: 'meshopt', meshopt_compression_level: level })
      levels.push(completedTaskSchema.parse(await waitForTask(server.call, id)).output.size_bytes)
    }
    expect(levels[1]).toBeLessThan(levels[0]!)
  })

  it('ends broken and hostile files as failed tasks with a reason, and keeps serving', async () => {
    const cases: [string, NonNullable<Parameters<typeof form>[1]>[number], RegExp][] = [
      ['random bytes', { name: 'noise.glb', bytes: new Uint8Array(4096).map((_, i) => (i * 7919) % 251) }, /not a GLB file/],
      ['truncated GLB', { name: 'cut.glb', bytes: (await readFile(paths.engine)).subarray(0, 50_000) }, /truncated GLB/],
      ['IndexOutOfRange', broken.paths.indexOutOfRange, /external resource not available/],
      ['IncorrectVertexArrays', broken.paths.incorrectVertexArrays, /external resource not available/],
      ['MissingBin', broken.paths.missingBin, /external resource not available: "BoxTextured0.bin"/],
      ['a .gltf pointing at a file beside it', broken.paths.externalBin, /external resource not available/],
      [
        'a .gltf pointing at the server disk',
        {
          name: 'escape.gltf',
          bytes: new TextEncoder().encode(JSON.stringify({ asset: { version: '2.0' }, buffers: [{ uri: '/etc/passwd', byteLength: 10 }] })),
        },
        /external resource not available: "\/etc\/passwd"/,
      ],
      ['JSON that is not glTF', { name: 'x.gltf', bytes: new TextEncoder().encode('{"hello": 1}') }, /missing "asset"/],
    ]
    for (const [label, file, reason] of cases) {
      const response = await server.call('/api/v1/compress', { method: 'POST', body: await form({ engine: 'draco' }, [file]) })
      expect(response.status, label).toBe(200)
      const record = failedTaskSchema.parse(await waitForTask(server.call, submitResponseSchema.parse(await response.json()).task_id))
      expect(record.error, label).toMatch(reason)
    }
    // An empty file is refused at the door, as a missing one (docs/api.md), before any task exists.
    const empty = await server.call('/api/v1/compress', {
      method: 'POST',
      body: await form({ engine: 'draco' }, [{ name: 'empty.glb', bytes: new Uint8Array(0) }]),
    })
    expect(empty.status).toBe(400)
    expect(await empty.json()).toEqual({ error: 'missing required field: file' })
    expect(await (await server.call('/api/v1/health')).json()).toEqual({ status: 'ok' })
    const id = await submit(paths.box, { engine: 'draco' })
    expect((await waitForTask(server.call, id)).status).toBe('completed')
  })

  /** Submits a .gltf from the corpus with its .bin embedded, so the reader sees its data. */
  const compressEmbedded = async (path: string) => {
    const response = await server.call('/api/v1/compress', {
      method: 'POST',
      body: await form({ engine: 'draco' }, [{ name: 'embedded.gltf', bytes: embeddedGltf(path) }]),
    })
    return waitForTask(server.call, submitResponseSchema.parse(await response.json()).task_id)
  }

  it("fails an input whose views run past its buffer instead of reading bytes that are not the file's", async () => {
    const record = await compressEmbedded(broken.paths.incorrectVertexArrays)
    expect(failedTaskSchema.parse(record).error).toMatch(
      /^invalid glTF: (bufferView|accessor) \d+ ends at byte \d+, past the \d+ bytes of (buffer|bufferView) \d+$/,
    )
  })

  it('fails an input whose indices point past its vertices instead of encoding garbage', async () => {
    const record = await compressEmbedded(broken.paths.indexOutOfRange)
    expect(failedTaskSchema.parse(record).error).toMatch(/index \d+ out of range \(\d+ vertices\); run repair first/)
  })
})
