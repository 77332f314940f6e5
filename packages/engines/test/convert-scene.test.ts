import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { unzipSync } from 'fflate'
import { afterAll, describe, expect, it } from 'vitest'
import { assimpInfo, hasAssimpCli } from '../../../test/support/assimp-info.ts'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import {
  countMeshTriangles,
  countSceneTriangles,
  createEnginePool,
  loadPlatform,
  readImageHeader,
  readModel,
  type MergeReport,
  type SimplifyReport,
  type TextureReport,
} from '../src/index.ts'
import { expectBoundsKept, expectHalved, glbOf } from './support/compress-file.ts'
import { success } from './support/job-result.ts'
import { validateGlb } from './texture-fixtures.ts'

const { available, paths } = corpusFiles({
  cow: shared('obj', 'cow.obj'),
  shapes: shared('glb', 'ShapeCollection.glb'),
  engine: assimp('glTF2', '2CylinderEngine-glTF-Binary', '2CylinderEngine.glb'),
  box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
  outOfRange: assimp('glTF2', 'IndexOutOfRange', 'IndexOutOfRange.gltf'),
})

type SimplifyDetails = SimplifyReport & { target_ratio: number; max_error: number; ratio: number }

/** Convert with compress's scene steps (simplify, texture resize, merge: Mos extension fields), on real files through the engine thread. */
describe.skipIf(!available)('convert with the scene extension fields', async () => {
  const pool = createEnginePool({ threads: 1 })
  const platform = await loadPlatform()
  afterAll(() => pool.destroy())

  const convert = async (path: string, options: Record<string, unknown>) => {
    const format = path.slice(path.lastIndexOf('.') + 1)
    return success(await pool.run({ name: 'convert', input: { path }, format, options }))
  }
  const read = async (path: string) => readModel(platform, new Uint8Array(await readFile(path)), path.endsWith('.obj') ? 'obj' : 'glb')

  it('cow.obj → glb with simplify_ratio=0.5: half the triangles within 5%, bounds kept, valid, figures matching the file', async () => {
    const input = await read(paths.cow)
    const result = await convert(paths.cow, { target_format: 'glb', simplify_ratio: 0.5 })
    expect((await validateGlb(result.bytes!)).errors).toEqual([])
    const output = await platform.io.readBinary(result.bytes!)
    const before = countMeshTriangles(input)
    const after = countMeshTriangles(output)
    expectHalved(after, before)
    const simplify = result.details!.simplify as SimplifyDetails
    expect(simplify).toMatchObject({ target_ratio: 0.5, max_error: 0.01, triangles_before: before, triangles_after: after })
    expect(simplify.ratio).toBeCloseTo(after / before, 10)
    expect(simplify.error).toBeGreaterThan(0)
    expect(simplify.error).toBeLessThanOrEqual(0.01)
    await expectBoundsKept(input, output, 0.01)
  })

  it.skipIf(!hasAssimpCli())('2CylinderEngine.glb → obj with simplify_ratio=0.5: assimp reads the triangles the task reports', async () => {
    const result = await convert(paths.engine, { target_format: 'obj', simplify_ratio: 0.5 })
    const simplify = result.details!.simplify as SimplifyDetails
    expectHalved(simplify.triangles_after, simplify.triangles_before)
    // The materials' colours come with it: a zip of the .obj and its .mtl.
    expect(result.extension).toBe('zip')
    const dir = await mkdtemp(join(tmpdir(), 'mos-convert-scene-'))
    try {
      for (const [name, content] of Object.entries(unzipSync(result.bytes!))) await writeFile(join(dir, name), content)
      // The task counts each mesh once; the OBJ writes each drawn instance, and the ratio is a share of those.
      const drawn = countSceneTriangles(await readModel(platform, await readFile(join(dir, 'model.obj')), 'obj'))
      expect((await assimpInfo(join(dir, 'model.obj'), { raw: true })).triangles).toBe(drawn)
      expectHalved(drawn, countSceneTriangles(await read(paths.engine)))
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('ShapeCollection.glb → glb with merge=true: fewer draw calls, every drawn triangle and the bounds kept', async () => {
    const input = await read(paths.shapes)
    const result = await convert(paths.shapes, { target_format: 'glb', merge: true })
    expect((await validateGlb(result.bytes!)).errors).toEqual([])
    const output = await platform.io.readBinary(result.bytes!)
    const merge = result.details!.merge as MergeReport
    expect(merge.draw_calls_after).toBeLessThan(merge.draw_calls_before)
    expect(output.getRoot().listNodes().length).toBe(merge.nodes_after)
    expect(countSceneTriangles(output)).toBe(countSceneTriangles(input))
    await expectBoundsKept(input, output, 1e-5)
  })

  it('BoxTextured.glb → gltf with texture_max_size=64 and power of two: the bundled image is what the task reports', async () => {
    const result = await convert(paths.box, { target_format: 'gltf', texture_max_size: 64, texture_power_of_two: true })
    expect(result.extension).toBe('zip')
    const images = Object.entries(unzipSync(result.bytes!)).filter(([name]) => /\.(png|jpe?g|webp)$/i.test(name))
    expect(images).toHaveLength(1)
    const header = readImageHeader(images[0]![1])!
    expect([header.width, header.height]).toEqual([64, 64])
    const resized = result.details!.textures_resized as TextureReport[]
    expect(resized).toEqual([expect.objectContaining({ resizedFrom: [211, 211], size: [64, 64] })])
    // A glTF target's PNG is then re-packed where that is smaller still: the bundle holds the last of the two.
    const repacked = (result.details!.textures_repacked as TextureReport[] | undefined) ?? []
    if (repacked[0]) expect(repacked[0].before).toBe(resized[0]!.after)
    expect((repacked[0] ?? resized[0]!).after).toBe(images[0]![1].byteLength)
  })

  it('without the fields convert reports no scene details (the contract behaviour)', async () => {
    const result = await convert(paths.box, { target_format: 'glb' })
    expect(Object.keys(result.details ?? {}).filter((key) => key !== 'notes')).toEqual([])
  })

  it('a file convert refuses is refused with its own reason before any scene step runs', async () => {
    const glb = await glbOf(platform, paths.outOfRange)
    const options = { target_format: 'glb', simplify_ratio: 0.5, merge: true }
    const result = await pool.run({ name: 'convert', input: { bytes: glb }, format: 'glb', options })
    expect(result.ok).toBe(false)
    expect(!result.ok && result.message).toMatch(/out-of-range indices; repair drops them/)
  })
})
