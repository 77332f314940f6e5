import {
  completedTaskSchema,
  describeRule,
  diagnosisResultSchema,
  ERROR_TEXTS,
  submitResponseSchema,
  textureKtx2FieldSpecs,
  textureOptimizeFieldSpecs,
} from '@mos/sdk/contract'
import { Document, NodeIO } from '@gltf-transform/core'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import { form, inProcessApp, tempDir, testEnv, VARIANTS, waitForTask } from './support/harness.ts'

const { available, paths } = corpusFiles({
  badNormals: assimp('glTF2', 'BoxBadNormals-glTF-Binary', 'BoxBadNormals.glb'),
  engine: assimp('glTF2', '2CylinderEngine-glTF-Binary', '2CylinderEngine.glb'),
  knight: shared('glb', 'chr_knight.glb'),
})

const objFile = {
  name: 'cube.obj',
  bytes: new TextEncoder().encode(
    [
      'v 0 0 0',
      'v 1 0 0',
      'v 1 1 0',
      'v 0 1 0',
      'v 0 0 1',
      'v 1 0 1',
      'v 1 1 1',
      'v 0 1 1',
      'f 1 2 3 4',
      'f 5 8 7 6',
      'f 1 5 6 2',
      'f 2 6 7 3',
      'f 3 7 8 4',
      'f 5 1 4 8',
    ].join('\n'),
  ),
}

const KTX2_IDENTIFIER = [0xab, 0x4b, 0x54, 0x58, 0x20, 0x32, 0x30, 0xbb, 0x0d, 0x0a, 0x1a, 0x0a]

describe.skipIf(!available).each(VARIANTS)('operations in variant %s (in-process)', (variant) => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let service: ReturnType<typeof inProcessApp>
  let png: Uint8Array

  beforeAll(async () => {
    dir = await tempDir()
    service = inProcessApp(testEnv(variant, dir.path))
    png = new Uint8Array(
      await sharp({ create: { width: 128, height: 96, channels: 3, background: { r: 200, g: 80, b: 20 } } })
        .png()
        .toBuffer(),
    )
  })
  afterAll(async () => {
    await service.close()
    await dir.remove()
  })

  const run = async (path: string, fields: Record<string, string | number>, file: NonNullable<Parameters<typeof form>[1]>[number]) => {
    const response = await service.call(path, { method: 'POST', body: await form(fields, [file]) })
    expect(response.status, await response.clone().text()).toBe(200)
    const { task_id } = submitResponseSchema.parse(await response.json())
    const record = await waitForTask((p) => service.call(p), task_id)
    const download =
      record.status === 'completed'
        ? new Uint8Array(await (await service.call(`/api/v1/tasks/${task_id}/download`)).arrayBuffer())
        : undefined
    return { record, download }
  }

  it.each(variant === 'A' ? ['glb', 'gltf', 'obj', 'stl', 'ply', 'fbx', 'dae'] : ['glb', 'gltf', 'obj', 'stl', 'ply'])(
    'converts a GLB to %s',
    async (target) => {
      const { record, download } = await run('/api/v1/convert', { target_format: target }, paths.badNormals)
      const completed = completedTaskSchema.parse(record)
      // The new extension says what was done; gltf comes back as a .zip bundle, and so does obj with its
      // .mtl (the box's material is red); glb → glb is tagged.
      const name =
        { gltf: 'BoxBadNormals.gltf.zip', obj: 'BoxBadNormals.obj.zip', glb: 'BoxBadNormals.converted.glb' }[target] ??
        `BoxBadNormals.${target}`
      expect(completed.output.filename).toBe(name)
      expect(download!.byteLength).toBe(completed.output.size_bytes)
      const head = new TextDecoder().decode(download!.subarray(0, 40))
      const signature: Record<string, RegExp> = {
        glb: /^glTF/,
        gltf: /^PK/,
        obj: /^PK/,
        ply: /^ply\n/,
        fbx: /^Kaydara FBX Binary/,
        dae: /^<\?xml/,
      }
      if (target === 'stl') {
        // Binary STL: an 80-byte header, a triangle count, 50 bytes per triangle.
        const triangles = new DataView(download!.buffer, download!.byteOffset).getUint32(80, true)
        expect(triangles).toBeGreaterThan(0)
        expect(download!.byteLength).toBe(84 + 50 * triangles)
      } else {
        expect(head).toMatch(signature[target]!)
      }
    },
  )

  it('converts an OBJ upload to GLB', async () => {
    const { record, download } = await run('/api/v1/convert', { target_format: 'glb' }, objFile)
    expect(completedTaskSchema.parse(record).output.filename).toBe('cube.glb')
    expect(new TextDecoder().decode(download!.subarray(0, 4))).toBe('glTF')
  })

  it('validates target_format', async () => {
    let response = await service.call('/api/v1/convert', { method: 'POST', body: await form({}, [paths.badNormals]) })
    expect(await response.json()).toEqual({ error: ERROR_TEXTS.missingField('target_format') })
    for (const target of variant === 'A' ? ['3ds'] : ['3ds', 'fbx', 'dae']) {
      response = await service.call('/api/v1/convert', { method: 'POST', body: await form({ target_format: target }, [paths.badNormals]) })
      expect(response.status).toBe(400)
      expect(await response.json()).toEqual({ error: ERROR_TEXTS.unsupportedFormat(target) })
    }
  })

  it('repairs a model and says what it fixed', async () => {
    const { record, download } = await run('/api/v1/repair', {}, paths.badNormals)
    const completed = completedTaskSchema.parse(record)
    expect(completed.type).toBe('repair')
    expect(completed.output.filename).toBe('BoxBadNormals.repaired.glb')
    expect((record.repairs as Record<string, number>).normals_recomputed).toBeGreaterThan(0)
    expect(new TextDecoder().decode(download!.subarray(0, 4))).toBe('glTF')
  })

  it('re-encodes the textures of a model, keeping the container, never into a larger texture or file', async () => {
    // The knight's one texture is a 172-byte PNG, which WebP would make 556 bytes: it keeps its bytes, said in the record.
    const { record, download } = await run('/api/v1/textures/optimize', { format: 'webp', quality: 80 }, paths.knight)
    const completed = completedTaskSchema.parse(record)
    expect(completed.output.filename).toBe('chr_knight.textures.glb')
    expect(completed.output.compression_ratio).toBeCloseTo(completed.output.size_bytes / completed.input_size_bytes, 3)
    expect(completed.output.size_bytes).toBeLessThanOrEqual(completed.input_size_bytes)
    expect(record.textures).toEqual([
      expect.objectContaining({
        from: 'image/png',
        to: 'image/png',
        before: 172,
        after: 172,
        note: expect.stringMatching(/^original kept: WebP/),
      }),
    ])
    expect(new TextDecoder().decode(download!)).not.toContain('EXT_texture_webp')
  })

  it('converts a standalone image to the target format', async () => {
    const { record, download } = await run('/api/v1/textures/optimize', { format: 'jpeg' }, { name: 'swatch.png', bytes: png })
    expect(completedTaskSchema.parse(record).output.filename).toBe('swatch.optimized.jpg')
    expect(await sharp(download!).metadata()).toMatchObject({ format: 'jpeg', width: 128, height: 96 })
  })

  it('lossy_normal_maps (a Mos extension, default false) reaches the engine: the normal map is re-encoded lossy', async () => {
    const doc = new Document()
    // Noisy, so that JPEG is smaller than the PNG (a flat map's PNG is smaller than any JPEG, and would be kept).
    const normal = await sharp({
      create: {
        width: 64,
        height: 64,
        channels: 3,
        background: { r: 128, g: 128, b: 255 },
        noise: { type: 'gaussian', mean: 128, sigma: 20 },
      },
    })
      .png()
      .toBuffer()
    const position = doc
      .createAccessor()
      .setType('VEC3')
      .setArray(new Float32Array([0, 0, 0, 1, 0, 0, 0, 1, 0]))
    const uv = doc
      .createAccessor()
      .setType('VEC2')
      .setArray(new Float32Array([0, 0, 1, 0, 0, 1]))
    const material = doc.createMaterial().setNormalTexture(doc.createTexture('normal').setImage(normal).setMimeType('image/png'))
    const mesh = doc
      .createMesh()
      .addPrimitive(doc.createPrimitive().setAttribute('POSITION', position).setAttribute('TEXCOORD_0', uv).setMaterial(material))
    doc.createScene().addChild(doc.createNode().setMesh(mesh))
    doc.createBuffer()
    for (const accessor of doc.getRoot().listAccessors()) accessor.setBuffer(doc.getRoot().listBuffers()[0]!)
    const file = { name: 'normal.glb', bytes: await new NodeIO().writeBinary(doc) }
    const normalMime = async (fields: Record<string, string>) => {
      const { download } = await run('/api/v1/textures/optimize', fields, file)
      return (await new NodeIO().readBinary(download!)).getRoot().listTextures()[0]!.getMimeType()
    }
    expect(await normalMime({ format: 'jpeg' })).toBe('image/png')
    expect(await normalMime({ format: 'jpeg', lossy_normal_maps: 'true' })).toBe('image/jpeg')
  })

  for (const [spec, extra] of [
    ...textureOptimizeFieldSpecs('jpeg').map((s) => [s, { format: 'jpeg' }] as const),
    ...textureOptimizeFieldSpecs('png')
      .filter((s) => s.name === 'quality')
      .map((s) => [s, { format: 'png' }] as const),
  ]) {
    it(`validates textures/optimize ${spec.name} (${JSON.stringify(extra)})`, async () => {
      const bad = spec.kind === 'integer' ? String(spec.max + 1) : 'gif'
      const response = await service.call('/api/v1/textures/optimize', {
        method: 'POST',
        body: await form({ ...extra, [spec.name]: bad }, [{ name: 'a.png', bytes: png }]),
      })
      expect(response.status).toBe(400)
      const error = spec.kind === 'enum' ? ERROR_TEXTS.unsupportedFormat('gif') : ERROR_TEXTS.invalidField(spec.name, describeRule(spec))
      expect(await response.json()).toEqual({ error })
    })
  }

  it('names the missing format of textures/optimize', async () => {
    const response = await service.call('/api/v1/textures/optimize', {
      method: 'POST',
      body: await form({}, [{ name: 'a.png', bytes: png }]),
    })
    expect(await response.json()).toEqual({ error: ERROR_TEXTS.missingField('format') })
  })

  if (variant === 'A') {
    it('diagnoses a model: the result object of 2.3 on the task record, and as a JSON download', async () => {
      const { record, download } = await run('/api/v1/diagnose', {}, paths.engine)
      const completed = completedTaskSchema.parse(record)
      const result = diagnosisResultSchema.parse(completed.result)
      expect(result.format).toBe('glb')
      expect(result.file_size_bytes).toBe(completed.input_size_bytes)
      expect(result.meshes.reduce((n, m) => n + m.triangles, 0)).toBeGreaterThan(0)
      expect(JSON.parse(new TextDecoder().decode(download!))).toEqual(record.result)
    })

    it('encodes a standalone image to KTX2 (ETC1S by default, UASTC on request)', async () => {
      for (const fields of [{}, { uastc: 'true', quality: 1 }] as Record<string, string | number>[]) {
        const { record, download } = await run('/api/v1/textures/ktx2', fields, { name: 'swatch.png', bytes: png })
        expect(completedTaskSchema.parse(record).output.filename).toBe('swatch.ktx2')
        expect([...download!.subarray(0, 12)]).toEqual(KTX2_IDENTIFIER)
      }
    })

    it('validates textures/ktx2 quality per mode', async () => {
      for (const [uastc, spec] of [
        [false, textureKtx2FieldSpecs(false)[1]!],
        [true, textureKtx2FieldSpecs(true)[1]!],
      ] as const) {
        if (spec.kind !== 'integer') throw new Error('quality is an integer field')
        const response = await service.call('/api/v1/textures/ktx2', {
          method: 'POST',
          body: await form({ uastc: String(uastc), quality: spec.max + 1 }, [{ name: 'a.png', bytes: png }]),
        })
        expect(response.status).toBe(400)
        expect(await response.json()).toEqual({ error: ERROR_TEXTS.invalidField('quality', describeRule(spec)) })
      }
    })
  }
})
