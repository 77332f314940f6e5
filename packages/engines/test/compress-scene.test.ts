import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import type { Document, Mesh } from '@gltf-transform/core'
import { mergeDocuments, unpartition } from '@gltf-transform/functions'
import { zipSync } from 'fflate'
import { afterAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import { readImageHeader } from '../src/io/image-header.ts'
import { readModel } from '../src/io/index.ts'
import {
  countMeshTriangles,
  countSceneTriangles,
  createEnginePool,
  loadPlatform,
  resizedDimensions,
  type InstanceReport,
  type MergeReport,
  type SimplifyReport,
  type TextureReport,
} from '../src/index.ts'
import { compressFileWith, expectBoundsKept, expectHalved, glbOf } from './support/compress-file.ts'
import { success } from './support/job-result.ts'

const { available, paths } = corpusFiles({
  sphere: shared('glb', 'DenseSphere.glb'),
  shapes: shared('glb', 'ShapeCollection.glb'),
  knight: shared('glb', 'chr_knight.glb'),
  cow: shared('obj', 'cow.obj'),
  spot: shared('obj', 'spot.obj'),
  engine: assimp('glTF2', '2CylinderEngine-glTF-Binary', '2CylinderEngine.glb'),
  box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
  skin: assimp('glTF2', 'simple_skin', 'simple_skin.gltf'),
  morph: assimp('glTF2', 'glTF-Sample-Models', 'AnimatedMorphCube-glTF', 'AnimatedMorphCube.gltf'),
  points: assimp('PLY', 'points.ply'),
  outOfRange: assimp('glTF2', 'IndexOutOfRange', 'IndexOutOfRange.gltf'),
  allOutOfRange: assimp('glTF2', 'IndexOutOfRange', 'AllIndicesOutOfRange.gltf'),
  infinites: assimp('glTF2', 'BoxWithInfinites-glTF-Binary', 'BoxWithInfinites.glb'),
  spiderObj: assimp('OBJ', 'spider.obj'),
  spiderMtl: assimp('OBJ', 'spider.mtl'),
  spiderTex: assimp('OBJ', 'SpiderTex.jpg'),
  drkwood: assimp('OBJ', 'drkwood2.jpg'),
  engineflare: assimp('OBJ', 'engineflare1.jpg'),
  wal67: assimp('OBJ', 'wal67ar_small.jpg'),
  wal69: assimp('OBJ', 'wal69ar_small.jpg'),
})

/** Nodes, and draw calls as a viewer makes them (each mesh's primitives once per node drawing it), of a file read back. */
function drawnCounts(doc: Document): { nodes: number; drawCalls: number } {
  let drawCalls = 0
  for (const scene of doc.getRoot().listScenes()) scene.traverse((node) => (drawCalls += node.getMesh()?.listPrimitives().length ?? 0))
  return { nodes: doc.getRoot().listNodes().length, drawCalls }
}

type SimplifyDetails = SimplifyReport & { target_ratio: number; max_error: number; ratio: number }

const ENGINES = ['draco', 'meshopt'] as const

/** Compress's scene extensions (simplify, resize, merge, instance) on real files, through the engine thread. */
describe.skipIf(!available)('compress with the scene extension fields', async () => {
  const pool = createEnginePool({ threads: 1 })
  const platform = await loadPlatform()
  afterAll(() => pool.destroy())

  const compressFile = compressFileWith(pool, platform)

  for (const engine of ENGINES) {
    it(`simplify_ratio=0.5 halves DenseSphere's triangles within 5% (${engine}), and reports what the file holds`, async () => {
      const { input, output, details } = await compressFile(paths.sphere, { engine, simplify_ratio: 0.5 })
      const simplify = details.simplify as SimplifyDetails
      const before = countMeshTriangles(input)
      const after = countMeshTriangles(output)
      expect(simplify.triangles_before).toBe(before)
      expect(simplify.triangles_after).toBe(after)
      expect(simplify.ratio).toBeCloseTo(after / before, 10)
      expectHalved(after, before)
      expect(simplify.target_ratio).toBe(0.5)
      expect(simplify.error).toBeGreaterThan(0)
      expect(simplify.error).toBeLessThanOrEqual(simplify.max_error)
      await expectBoundsKept(input, output, 0.02)
    })
  }

  it('simplify_ratio halves a mesh drawn by several nodes on its own: cow.obj drawn three times beside spot.obj, drawn and held triangles halved within 5%', async () => {
    const scene = await readModel(platform, await readFile(paths.cow), 'obj')
    mergeDocuments(scene, await readModel(platform, await readFile(paths.spot), 'obj'))
    const [first, second] = scene.getRoot().listScenes()
    for (const node of second!.listChildren()) first!.addChild(node)
    second!.dispose()
    const cow = scene.getRoot().listMeshes()[0]!
    for (const x of [2, 4]) first!.addChild(scene.createNode().setMesh(cow).setTranslation([x, 0, 0]))
    await scene.transform(unpartition())
    const dir = await mkdtemp(join(tmpdir(), 'mos-draws-'))
    try {
      await writeFile(join(dir, 'herd.glb'), await platform.io.writeBinary(scene))
      const { input, output } = await compressFile(join(dir, 'herd.glb'), { engine: 'meshopt', simplify_ratio: 0.5 })
      expect(countSceneTriangles(input)).toBeGreaterThan(1.5 * countMeshTriangles(input))
      expectHalved(countSceneTriangles(output), countSceneTriangles(input))
      expectHalved(countMeshTriangles(output), countMeshTriangles(input))
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('simplify_error alone reduces as far as the error allows, never past it', async () => {
    const loose = await compressFile(paths.sphere, { engine: 'meshopt', simplify_error: 0.02 })
    const tight = await compressFile(paths.sphere, { engine: 'meshopt', simplify_error: 0.001 })
    const [l, t] = [loose.details.simplify as SimplifyDetails, tight.details.simplify as SimplifyDetails]
    expect(l.error).toBeLessThanOrEqual(0.02)
    expect(t.error).toBeLessThanOrEqual(0.001)
    expect(l.triangles_after).toBe(countMeshTriangles(loose.output))
    expect(l.triangles_after).toBeLessThan(t.triangles_after)
    expect(t.triangles_after).toBeLessThan(t.triangles_before)
    await expectBoundsKept(loose.input, loose.output, 0.03)
  })

  it('simplify_error=1, the largest allowed, still leaves every model something to draw', async () => {
    for (const path of [paths.box, paths.knight, paths.sphere, paths.engine]) {
      const { output, details } = await compressFile(path, { engine: 'meshopt', simplify_error: 1 })
      const simplify = details.simplify as SimplifyDetails
      expect(simplify.triangles_after, path).toBe(countMeshTriangles(output))
      expect(simplify.triangles_after, path).toBeGreaterThan(0)
      expect(simplify.error, path).toBeLessThanOrEqual(1)
    }
  })

  it('simplifies a textured model with its UV seams and borders kept (chr_knight, 2CylinderEngine)', async () => {
    for (const path of [paths.knight, paths.engine]) {
      const { input, output, details } = await compressFile(path, { engine: 'meshopt', simplify_ratio: 0.5 })
      const simplify = details.simplify as SimplifyDetails
      expect(simplify.triangles_after).toBe(countMeshTriangles(output))
      expect(simplify.triangles_after).toBeLessThan(simplify.triangles_before)
      expect(output.getRoot().listTextures().length).toBe(input.getRoot().listTextures().length)
      await expectBoundsKept(input, output, 0.02)
    }
  })

  it('simplifies a skinned mesh in its bind pose and skips morphed meshes with a note', async () => {
    const skinned = await compressFile(paths.skin, { engine: 'meshopt', simplify_ratio: 0.5 })
    expect(skinned.output.getRoot().listSkins()).toHaveLength(1)
    expect((skinned.details.simplify as SimplifyDetails).skipped).toEqual([])
    const morphed = await compressFile(paths.morph, { engine: 'draco', simplify_ratio: 0.5 })
    const simplify = morphed.details.simplify as SimplifyDetails
    expect(simplify.skipped).toEqual([expect.stringMatching(/primitive 0: morph targets/)])
    expect(simplify.triangles_after).toBe(simplify.triangles_before)
    expect(countMeshTriangles(morphed.output)).toBe(countMeshTriangles(morphed.input))
  })

  it('texture_max_size scales the longest side down, power of two on request, and reports the sizes the file holds', async () => {
    const cases = [
      { options: { texture_max_size: 100 }, size: [100, 100] },
      { options: { texture_max_size: 100, texture_power_of_two: true }, size: [64, 64] },
      { options: { texture_power_of_two: true }, size: [128, 128] },
      { options: { texture_max_size: 4096 }, size: [211, 211] },
    ]
    for (const { options, size } of cases) {
      const { output, details } = await compressFile(paths.box, { engine: 'draco', ...options })
      const image = output.getRoot().listTextures()[0]!.getImage()!
      const header = readImageHeader(image)!
      expect([header.width, header.height], JSON.stringify(options)).toEqual(size)
      const resized = details.textures_resized as TextureReport[]
      if (size[0] === 211) expect(resized).toEqual([])
      else {
        expect(resized).toEqual([expect.objectContaining({ resizedFrom: [211, 211], size, to: 'image/png' })])
        // Compress then re-packs the resized PNG smaller still (png-repack.ts: sharp's PNG of a box this
        // size takes more bytes than its smallest form), and says so, from the resize's size on.
        const repacked = (details.textures_repacked as TextureReport[] | undefined) ?? []
        const last = repacked.find((report) => report.name === resized[0]!.name)
        expect(last, JSON.stringify(options)).toMatchObject({ before: resized[0]!.after, after: image.byteLength })
        expect(last!.after).toBeLessThan(last!.before)
      }
    }
  })

  it('a KTX2 texture over texture_max_size is left as it was and named with why in the notes; one within it is not', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mos-ktx2-resize-'))
    try {
      const ktx2 = success(await pool.run({ name: 'texture_ktx2', input: { path: paths.box }, format: 'glb', options: {} }))
      const path = join(dir, 'box-ktx2.glb')
      await writeFile(path, ktx2.bytes!)
      const over = await compressFile(path, { engine: 'meshopt', texture_max_size: 64 })
      const header = readImageHeader(over.output.getRoot().listTextures()[0]!.getImage()!)
      expect(header).toEqual({ format: 'ktx2', width: 212, height: 212 })
      const why = 'KTX2 is not resized (sharp cannot decode it), so its 212×212 is kept'
      expect(over.details.textures_resized).toEqual([expect.objectContaining({ name: 'texture 0', skipped: why })])
      expect(over.details.notes).toContain(`texture 0 left as it was: ${why}`)
      const within = await compressFile(path, { engine: 'meshopt', texture_max_size: 1024 })
      expect(within.details.textures_resized).toEqual([])
      expect(JSON.stringify(within.details.notes ?? [])).not.toContain('left as it was')
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('resizedDimensions keeps the aspect ratio and never enlarges', () => {
    expect(resizedDimensions(4096, 1024, 1024)).toEqual([1024, 256])
    expect(resizedDimensions(1000, 600, 2048)).toEqual([1000, 600])
    expect(resizedDimensions(1000, 600, 2048, true)).toEqual([512, 512])
    expect(resizedDimensions(256, 1, 16, true)).toEqual([16, 1])
  })

  for (const engine of ENGINES) {
    it(`merge joins ShapeCollection's nodes into fewer draw calls, same triangles and bounds, smaller (${engine})`, async () => {
      const plain = await compressFile(paths.shapes, { engine })
      const merged = await compressFile(paths.shapes, { engine, merge: true })
      const report = merged.details.merge as MergeReport
      expect(report.nodes_before).toBe(merged.input.getRoot().listNodes().length)
      expect(report.nodes_after).toBe(merged.output.getRoot().listNodes().length)
      expect(report.nodes_after).toBeLessThan(report.nodes_before)
      expect(report.draw_calls_after).toBeLessThan(report.draw_calls_before)
      expect(countSceneTriangles(merged.output)).toBe(countSceneTriangles(merged.input))
      expect(merged.bytes.byteLength).toBeLessThan(plain.bytes.byteLength)
      await expectBoundsKept(merged.input, merged.output, 0.001)
    })

    it(`instance writes 2CylinderEngine's repeated meshes once with EXT_mesh_gpu_instancing (${engine})`, async () => {
      const { input, output, details } = await compressFile(paths.engine, { engine, instance: true })
      const report = details.instance as InstanceReport
      expect(report.instanced_meshes).toBeGreaterThan(0)
      const instanced = output
        .getRoot()
        .listNodes()
        .filter((node) => node.getExtension('EXT_mesh_gpu_instancing'))
      expect(instanced).toHaveLength(report.instanced_meshes)
      expect(
        output
          .getRoot()
          .listExtensionsUsed()
          .map((e) => e.extensionName),
      ).toContain('EXT_mesh_gpu_instancing')
      // Every node that drew a mesh is still drawn: as a node or as an instance.
      const drawn = (doc: Document) =>
        doc
          .getRoot()
          .listNodes()
          .filter((node) => node.getMesh()).length
      expect(drawn(output) - report.instanced_meshes + report.instances).toBe(drawn(input))
      await expectBoundsKept(input, output, 0.001)
    })
  }

  it('merge leaves a file of one draw call with no node above it byte for byte as it was (a point cloud keeps having no index buffer)', async () => {
    for (const engine of ENGINES) {
      const run = async (options: Record<string, unknown>) =>
        success(await pool.run({ name: 'compress', input: { path: paths.points }, format: 'ply', options: { engine, ...options } })).bytes!
      expect(Buffer.from(await run({ merge: true })).equals(Buffer.from(await run({}))), engine).toBe(true)
    }
  })

  it('merge on 2CylinderEngine: a mesh that took in other meshes’ triangles loses its name, a mesh left whole keeps it', async () => {
    const plain = await compressFile(paths.engine, { engine: 'meshopt' })
    const { output, bytes } = await compressFile(paths.engine, { engine: 'meshopt', merge: true })
    const triangles = (mesh: Mesh) => mesh.listPrimitives().reduce((sum, prim) => sum + (prim.getIndices()?.getCount() ?? 0) / 3, 0)
    const before = new Map(
      plain.output
        .getRoot()
        .listMeshes()
        .map((mesh) => [mesh.getName(), triangles(mesh)]),
    )
    expect(before.size).toBe(plain.output.getRoot().listMeshes().length) // the names are unique
    const named = output
      .getRoot()
      .listMeshes()
      .filter((mesh) => mesh.getName())
    const unnamed = output
      .getRoot()
      .listMeshes()
      .filter((mesh) => !mesh.getName())
    expect(named.length).toBeGreaterThan(0)
    expect(unnamed.length).toBeGreaterThan(0)
    // A name left on a mesh still names what it holds: that mesh's own triangles, no more.
    for (const mesh of named) expect(triangles(mesh), mesh.getName()).toBe(before.get(mesh.getName()))
    // The meshes without a name hold the triangles of the meshes whose names are gone: all of them but
    // a few that come out degenerate once joined, node transforms baked in (4 of 53 528 here), which
    // compress drops as it drops any degenerate triangle.
    const kept = new Set(named.map((mesh) => mesh.getName()))
    const absorbed = [...before].filter(([name]) => !kept.has(name)).reduce((sum, [, count]) => sum + count, 0)
    const joined = unnamed.reduce((sum, mesh) => sum + triangles(mesh), 0)
    expect(joined).toBeLessThanOrEqual(absorbed)
    expect(joined).toBeGreaterThan(absorbed * 0.999)
    // The marks that follow the vertices through the join are gone from the file.
    expect(new TextDecoder().decode(bytes)).not.toContain('_MOS_')
  })

  it("merge's report is the written file's: spider.obj zipped with its .mtl and JPEGs, merge and preset=web (draco)", async () => {
    const files = [paths.spiderObj, paths.spiderMtl, paths.spiderTex, paths.drkwood, paths.engineflare, paths.wal67, paths.wal69]
    const zip = zipSync(
      Object.fromEntries(await Promise.all(files.map(async (path) => [basename(path), new Uint8Array(await readFile(path))]))),
    )
    // preset=web as the contract's parser hands it to the engine: the fields it sets (COMPRESS_PRESETS.web).
    const web = { engine: 'draco', preset: 'web', merge: true, texture_max_size: 2048, texture_progressive_jpeg: true }
    for (const options of [{ engine: 'draco', merge: true }, web]) {
      const result = success(await pool.run({ name: 'compress', input: { bytes: zip.slice() }, format: 'zip', options }))
      const written = await platform.io.readBinary(result.bytes!)
      const report = result.details!.merge as MergeReport
      const counts = drawnCounts(written)
      // Compress joins the primitives the merge left of one material in one mesh: the file has 4 draw calls.
      expect(counts, JSON.stringify(options)).toEqual({ nodes: 1, drawCalls: 4 })
      expect(report, JSON.stringify(options)).toMatchObject({ nodes_after: counts.nodes, draw_calls_after: counts.drawCalls })
      expect(report, JSON.stringify(options)).toMatchObject({ nodes_before: 19, draw_calls_before: 19 })
    }
  })

  it('merge and instance together on 2CylinderEngine: instanced repeats, the rest joined', async () => {
    const { input, output, details } = await compressFile(paths.engine, { engine: 'meshopt', merge: true, instance: true })
    expect((details.instance as InstanceReport).instanced_meshes).toBeGreaterThan(0)
    expect((details.merge as MergeReport).draw_calls_after).toBeLessThan((details.merge as MergeReport).draw_calls_before)
    expect(countMeshTriangles(output)).toBeGreaterThan(0)
    await expectBoundsKept(input, output, 0.001)
  })

  it('refuses geometry compress refuses before any geometry step reads it: the same reason with the steps as without', async () => {
    for (const path of [paths.outOfRange, paths.allOutOfRange, paths.infinites]) {
      const glb = await glbOf(platform, path)
      const run = (options: Record<string, unknown>) =>
        pool.run({ name: 'compress', input: { bytes: glb.slice() }, format: 'glb', options })
      const plain = await run({ engine: 'meshopt' })
      expect(plain.ok).toBe(false)
      for (const options of [{ simplify_ratio: 0.5 }, { simplify_error: 0.05, merge: true }, { merge: true }, { instance: true }]) {
        const simplified = await run({ engine: 'meshopt', ...options })
        expect(simplified, `${path} with ${JSON.stringify(options)}`).toMatchObject({ ok: false, message: !plain.ok && plain.message })
        expect(!simplified.ok && simplified.message).toMatch(/; run repair first$/)
      }
    }
  })

  it('without the fields the job reports no scene details (the contract behaviour)', async () => {
    const { details } = await compressFile(paths.knight, { engine: 'meshopt' })
    // What compress reports on every run is all there is: its PNG re-packed (172 → 144 B), no step's report.
    expect(Object.keys(details)).toEqual(['textures_repacked'])
  })
})
