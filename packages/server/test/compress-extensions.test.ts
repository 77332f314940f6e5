import { COMPRESS_PRESETS, ERROR_TEXTS, VARIANT_SCHEMAS, completedTaskSchema, extensionFieldNames } from '@mos/sdk/contract'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Document } from '@gltf-transform/core'
import { countMeshTriangles, loadPlatform } from '@mos/engines'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import { colouredAssembly } from '../../engines/test/support/assembly.ts'
import { frameMarker } from '../../engines/test/support/jpeg.ts'
import { fetchMos, form, tempDir, testEnv, VARIANTS, waitForTask } from './support/harness.ts'
import { startMos, stopMos, type MosProcess } from './support/processes.ts'

const { available, paths } = corpusFiles({
  shapes: shared('glb', 'ShapeCollection.glb'),
  sphere: shared('glb', 'DenseSphere.glb'),
  normalMap: assimp('glTF2', 'ClearCoat-glTF', 'PlasticWrap_normals.jpg'),
  cow: shared('obj', 'cow.obj'),
  spot: shared('obj', 'spot.obj'),
  teapot: shared('obj', 'teapot.obj'),
  suzanne: shared('obj', 'suzanne.obj'),
  fandisk: shared('obj', 'fandisk.obj'),
})

/** A GLB of one textured triangle whose base colour is `jpeg`. */
async function jpegTexturedGlb(jpeg: Uint8Array): Promise<Uint8Array> {
  const doc = new Document()
  const buffer = doc.createBuffer()
  const accessor = (type: 'VEC2' | 'VEC3', values: number[]) =>
    doc.createAccessor().setType(type).setArray(new Float32Array(values)).setBuffer(buffer)
  const texture = doc.createTexture('photo').setImage(jpeg).setMimeType('image/jpeg')
  const primitive = doc
    .createPrimitive()
    .setAttribute('POSITION', accessor('VEC3', [0, 0, 0, 1, 0, 0, 0, 1, 0]))
    .setAttribute('TEXCOORD_0', accessor('VEC2', [0, 0, 1, 0, 0, 1]))
    .setMaterial(doc.createMaterial().setBaseColorTexture(texture))
  doc.createScene().addChild(doc.createNode().setMesh(doc.createMesh().addPrimitive(primitive)))
  return (await loadPlatform()).io.writeBinary(doc)
}

/** The frame header marker of the model's one texture: 0xc0 sequential, 0xc2 progressive. */
const textureFrameMarker = (model: Document) => frameMarker(model.getRoot().listTextures()[0]!.getImage()!)

/** Convert takes the scene steps that suit every target: no `instance` (glTF only), no `preset` (compress's bundles). */
const CONVERT_EXTENSION_FIELDS = ['simplify_ratio', 'simplify_error', 'texture_max_size', 'texture_power_of_two', 'merge']

/** Compress's and convert's Mos extension fields through the compiled server, in both variants. */
describe.skipIf(!available).each(VARIANTS)('compress and convert extension fields on the real server, variant %s', (variant) => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let mos: MosProcess | undefined
  beforeAll(async () => {
    dir = await tempDir()
    mos = await startMos(`compress-extensions-${variant}`, testEnv(variant, dir.path))
  })
  afterAll(async () => {
    await stopMos(mos)
    await dir.remove()
  })

  const get = (path: string) => fetchMos(mos!, path)
  const submit = (operation: 'compress' | 'convert') => async (fields: Record<string, string | number>, path: string) =>
    fetchMos(mos!, `/api/v1/${operation}`, { method: 'POST', body: await form(fields, [path]) })
  const compress = submit('compress')

  /** Submits, waits, and returns the completed record and the downloaded model (a GLB). */
  async function compressed(fields: Record<string, string | number>, path: string, operation: 'compress' | 'convert' = 'compress') {
    const response = await submit(operation)(fields, path)
    expect(response.status, await response.clone().text()).toBe(200)
    const { task_id } = (await response.json()) as { task_id: string }
    const record = await waitForTask(get, task_id)
    expect(record.status, JSON.stringify(record)).toBe('completed')
    completedTaskSchema.parse(record)
    const bytes = new Uint8Array(await (await get(`/api/v1/tasks/${task_id}/download`)).arrayBuffer())
    expect(bytes.byteLength).toBe((record as { output: { size_bytes: number } }).output.size_bytes)
    const { io } = await loadPlatform()
    return { record: record as Record<string, unknown>, model: await io.readBinary(bytes) }
  }

  it('lists the extension fields in capabilities under mos_extensions, the document keeping its variant shape', async () => {
    const doc = VARIANT_SCHEMAS[variant].capabilities.parse(await (await get('/api/v1/capabilities')).json())
    // The contract's declaration (its list: sdk's compress-fields.test.ts), served as declared.
    expect(doc.mos_extensions?.compress).toEqual(extensionFieldNames(variant).compress)
    expect(doc.mos_extensions?.compress).toEqual(
      expect.arrayContaining([
        'meshopt_extension',
        'preset',
        'merge',
        'instance',
        'texture_format',
        'texture_quality',
        'lossy_normal_maps',
      ]),
    )
    expect(doc.mos_extensions?.convert).toEqual(CONVERT_EXTENSION_FIELDS)
    expect(doc.mos_extensions?.texture_optimize).toEqual(['lossy_normal_maps'])
  })

  it('refuses out-of-range values with the contract error text', async () => {
    const cases: [string, string, string][] = [
      ['simplify_ratio', '0', 'must be a number above 0 and at most 1'],
      ['simplify_ratio', '1.5', 'must be a number above 0 and at most 1'],
      ['simplify_error', '-0.1', 'must be a number from 0 to 1'],
      ['texture_max_size', '8', 'must be an integer from 16 to 16384'],
      ['preset', 'desktop', 'must be one of web, mobile, archive'],
      ['merge', 'perhaps', 'must be true or false'],
      ['texture_progressive_jpeg', 'yes please', 'must be true or false'],
      ['palette', '2', 'must be true or false'],
      ['meshopt_extension', 'zstd', 'must be one of ext, khr'],
      ['texture_format', 'avif', 'must be one of webp, jpeg, png, ktx2'],
    ]
    for (const [field, value, rule] of cases) {
      const response = await compress({ engine: 'meshopt', [field]: value }, paths.shapes)
      expect(response.status, `${field}=${value}`).toBe(400)
      expect(await response.json()).toEqual({ error: ERROR_TEXTS.invalidField(field, rule) })
    }
  })

  it('refuses the texture fields where the texture_format given (or none) gives them no meaning, naming when they apply', async () => {
    const cases: [Record<string, string>, string, string][] = [
      [{ texture_format: 'webp', texture_progressive_jpeg: 'true' }, 'texture_progressive_jpeg', 'texture_format is jpeg or not given'],
      [{ texture_format: 'ktx2', texture_quality: '80' }, 'texture_quality', 'texture_format is jpeg or webp'],
      [{ texture_quality: '80' }, 'texture_quality', 'texture_format is jpeg or webp'],
      [{ texture_format: 'png', lossy_normal_maps: 'true' }, 'lossy_normal_maps', 'texture_format is jpeg or webp or ktx2'],
      [{ texture_format: 'jpeg', texture_quality: '0' }, 'texture_quality', ''],
    ]
    for (const [fields, field, when] of cases) {
      const response = await compress({ engine: 'draco', ...fields }, paths.shapes)
      expect(response.status, JSON.stringify(fields)).toBe(400)
      const rule = when ? `applies only when ${when}` : 'must be an integer from 1 to 100'
      expect(await response.json()).toEqual({ error: ERROR_TEXTS.invalidField(field, rule) })
    }
  })

  it('texture_format=webp with preset=web: the JPEG texture comes back WebP under a required EXT_texture_webp, reported and noted', async () => {
    const glb = join(dir.path, 'jpeg-textured-webp.glb')
    const jpeg = new Uint8Array(await readFile(paths.normalMap))
    await writeFile(glb, await jpegTexturedGlb(jpeg))
    const { record, model } = await compressed({ engine: 'meshopt', preset: 'web', texture_format: 'webp', texture_quality: 75 }, glb)
    const required = model
      .getRoot()
      .listExtensionsUsed()
      .filter((extension) => extension.isRequired())
      .map((extension) => extension.extensionName)
    expect(required).toEqual(expect.arrayContaining(['EXT_meshopt_compression', 'EXT_texture_webp']))
    const texture = model.getRoot().listTextures()[0]!
    expect(texture.getMimeType()).toBe('image/webp')
    const { width, height, format } = await sharp(texture.getImage()!).metadata()
    expect({ width, height, format }).toEqual({
      ...(await sharp(jpeg)
        .metadata()
        .then(({ width, height }) => ({ width, height }))),
      format: 'webp',
    })
    expect(record.textures).toEqual([
      expect.objectContaining({ from: 'image/jpeg', to: 'image/webp', after: texture.getImage()!.byteLength }),
    ])
    expect(record.texture_bytes_after).toBe(texture.getImage()!.byteLength)
    expect(record.notes).toEqual(expect.arrayContaining([expect.stringContaining('EXT_texture_webp as a required extension')]))
  })

  it('meshopt_extension=khr: the download declares KHR_meshopt_compression alone and reads to what ext gives, smaller; draco refuses it', async () => {
    const ext = await compressed({ engine: 'meshopt' }, paths.shapes)
    const khr = await compressed({ engine: 'meshopt', meshopt_extension: 'khr' }, paths.shapes)
    expect(
      khr.model
        .getRoot()
        .listExtensionsUsed()
        .map((extension) => extension.extensionName),
    ).toContain('KHR_meshopt_compression')
    expect(
      ext.model
        .getRoot()
        .listExtensionsUsed()
        .map((extension) => extension.extensionName),
    ).toContain('EXT_meshopt_compression')
    const values = (doc: typeof ext.model) =>
      doc
        .getRoot()
        .listAccessors()
        .map((accessor) => Array.from(accessor.getArray() ?? []))
    expect(values(khr.model)).toEqual(values(ext.model))
    const size = (record: Record<string, unknown>) => (record.output as { size_bytes: number }).size_bytes
    expect(size(khr.record)).toBeLessThan(size(ext.record))
    const response = await compress({ engine: 'draco', meshopt_extension: 'khr' }, paths.shapes)
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual({ error: ERROR_TEXTS.invalidField('meshopt_extension', 'applies only when engine is meshopt') })
  })

  it('texture_progressive_jpeg=true: a JPEG texture comes back progressive, smaller, with the same pixels; preset=web sets it', async () => {
    const glb = join(dir.path, 'jpeg-textured.glb')
    await writeFile(glb, await jpegTexturedGlb(new Uint8Array(await readFile(paths.normalMap))))
    const plain = await compressed({ engine: 'meshopt' }, glb)
    const progressive = await compressed({ engine: 'meshopt', texture_progressive_jpeg: 'true' }, glb)
    const web = await compressed({ engine: 'meshopt', preset: 'web' }, glb)
    expect(textureFrameMarker(plain.model)).toBe(0xc0)
    expect(textureFrameMarker(progressive.model)).toBe(0xc2)
    expect(textureFrameMarker(web.model)).toBe(0xc2)
    const image = (model: Document) => model.getRoot().listTextures()[0]!.getImage()!
    expect(image(progressive.model).byteLength).toBeLessThan(image(plain.model).byteLength)
    const pixels = (model: Document) => sharp(image(model)).raw().toBuffer()
    expect((await pixels(progressive.model)).equals(await pixels(plain.model))).toBe(true)
    const repacked = (record: Record<string, unknown>) => record.textures_repacked as { progressive?: boolean; after: number }[]
    expect(repacked(progressive.record)).toEqual([
      expect.objectContaining({ progressive: true, after: image(progressive.model).byteLength }),
    ])
    expect(repacked(plain.record)[0]?.progressive).toBeUndefined()
  })

  it('preset=web merges (a field it sets), and reports what it did on the record; instance=true adds instancing', async () => {
    expect(COMPRESS_PRESETS.web).toMatchObject({ merge: true })
    const { record, model } = await compressed({ engine: 'meshopt', preset: 'web' }, paths.shapes)
    const merge = record.merge as { nodes_before: number; nodes_after: number }
    expect(merge.nodes_after).toBe(model.getRoot().listNodes().length)
    expect(merge.nodes_after).toBeLessThan(merge.nodes_before)
    expect(record.instance).toBeUndefined()
    const instanced = await compressed({ engine: 'meshopt', preset: 'web', instance: 'true' }, paths.shapes)
    expect(instanced.record.instance).toEqual({ instanced_meshes: 1, instances: 2 })
  })

  it('palette=true: an assembly of five untextured parts comes back as one material reading a palette, merge joining them, reported on the record', async () => {
    const glb = join(dir.path, 'assembly.glb')
    const parts = [paths.cow, paths.spot, paths.teapot, paths.suzanne, paths.fandisk]
    const platform = await loadPlatform()
    await writeFile(glb, await platform.io.writeBinary(await colouredAssembly(platform, parts)))
    const { record, model } = await compressed({ engine: 'meshopt', merge: 'true', palette: 'true' }, glb)
    const palette = record.palette as { materials_before: number; materials_after: number; textures: { width: number; height: number }[] }
    expect([palette.materials_before, palette.materials_after]).toEqual([5, 1])
    expect(model.getRoot().listMaterials()).toHaveLength(1)
    expect(
      model
        .getRoot()
        .listTextures()
        .map((texture) => texture.getSize()),
    ).toEqual(palette.textures.map(({ width, height }) => [width, height]))
    expect((record.merge as { draw_calls_after: number }).draw_calls_after).toBe(2)
    const plain = await compressed({ engine: 'meshopt', merge: 'true' }, glb)
    expect([plain.record.palette, (plain.record.merge as { draw_calls_after: number }).draw_calls_after]).toEqual([undefined, 5])
  })

  it('an explicit field wins over the preset; simplify reports the triangles the download holds', async () => {
    const { record, model } = await compressed({ engine: 'draco', preset: 'mobile', merge: 'false', simplify_ratio: '0.25' }, paths.sphere)
    expect(record.merge).toBeUndefined()
    const simplify = record.simplify as { target_ratio: number; triangles_before: number; triangles_after: number; ratio: number }
    expect(simplify.target_ratio).toBe(0.25)
    expect(simplify.triangles_after).toBe(countMeshTriangles(model))
    expect(Math.abs(simplify.ratio - 0.25)).toBeLessThanOrEqual(0.05 * 0.25)
  })

  it('convert takes the scene fields: simplify and merge reported on the record, out-of-range values refused with the same text', async () => {
    const { record, model } = await compressed({ target_format: 'glb', simplify_ratio: '0.5' }, paths.sphere, 'convert')
    const simplify = record.simplify as { triangles_before: number; triangles_after: number; ratio: number }
    expect(simplify.triangles_after).toBe(countMeshTriangles(model))
    expect(Math.abs(simplify.ratio - 0.5)).toBeLessThanOrEqual(0.05 * 0.5)
    const merged = await compressed({ target_format: 'glb', merge: 'true' }, paths.shapes, 'convert')
    const merge = merged.record.merge as { draw_calls_before: number; draw_calls_after: number }
    expect(merge.draw_calls_after).toBeLessThan(merge.draw_calls_before)
    // A convert without them is the contract's: no scene details on the record.
    const plain = await compressed({ target_format: 'glb' }, paths.shapes, 'convert')
    expect([plain.record.simplify, plain.record.merge]).toEqual([undefined, undefined])
    const response = await submit('convert')({ target_format: 'glb', simplify_ratio: '1.5' }, paths.shapes)
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual({ error: ERROR_TEXTS.invalidField('simplify_ratio', 'must be a number above 0 and at most 1') })
  })
})
