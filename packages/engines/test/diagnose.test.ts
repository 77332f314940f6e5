import { readFile } from 'node:fs/promises'
import { basename } from 'node:path'
import { zipSync } from 'fflate'
import { afterAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
// The contract is checked from the test only: engines itself never imports the sdk.
import { diagnosisResultSchema } from '../../sdk/src/contract/documents.ts'
import { countMeshTriangles, createEnginePool, type JobResult, loadPlatform } from '../src/index.ts'
import type { DiagnosisIssue, DiagnosisResult } from '../src/ops/diagnosis-types.ts'
import { readImageHeader } from '../src/io/image-header.ts'
import { buildDefectiveModel, DEFECTS } from './defective-model.ts'
import { embeddedGltf } from '../../../test/support/gltf-fixtures.ts'

const { available, paths } = corpusFiles({
  engine: assimp('glTF2', '2CylinderEngine-glTF-Binary', '2CylinderEngine.glb'),
  box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
  knight: shared('glb', 'chr_knight.glb'),
  badNormals: assimp('glTF2', 'BoxBadNormals-glTF-Binary', 'BoxBadNormals.glb'),
  infinites: assimp('glTF2', 'BoxWithInfinites-glTF-Binary', 'BoxWithInfinites.glb'),
  indexOutOfRange: assimp('glTF2', 'IndexOutOfRange', 'IndexOutOfRange.gltf'),
  allIndicesOutOfRange: assimp('glTF2', 'IndexOutOfRange', 'AllIndicesOutOfRange.gltf'),
  incorrectVertexArrays: assimp('glTF2', 'IncorrectVertexArrays', 'Cube.gltf'),
  missingBin: assimp('glTF2', 'MissingBin', 'BoxTextured.gltf'),
  recursiveNodes: assimp('glTF2', 'RecursiveNodes', 'RecursiveNodes.gltf'),
  badArray: assimp('glTF2', 'wrongTypes', 'badArray.gltf'),
  noScene: assimp('glTF2', 'TestNoRootNode', 'NoScene.gltf'),
  simpleSkin: assimp('glTF2', 'simple_skin', 'simple_skin.gltf'),
  morphCube: assimp('glTF2', 'glTF-Sample-Models', 'AnimatedMorphCube-glTF', 'AnimatedMorphCube.gltf'),
  boxPng: assimp('glTF2', 'BoxTextured-glTF', 'CesiumLogoFlat.png'),
  manyCubes: shared('gltf', 'many-cubes.gltf'),
  manyCubesBin: shared('gltf', 'many-cubes.bin'),
  twoBoxes: assimp('glTF', 'TwoBoxes', 'TwoBoxes.gltf'),
  twoBoxesBin: assimp('glTF', 'TwoBoxes', 'Box.bin'),
  spiderObj: assimp('OBJ', 'spider.obj'),
  spiderMtl: assimp('OBJ', 'spider.mtl'),
  fbx: assimp('FBX', 'box.fbx'),
  duck: assimp('Collada', 'duck.dae'),
  duckTexture: assimp('Collada', 'duckCM.tga'),
  ply: assimp('PLY', 'cube_binary.ply'),
})

/** Issues of a mesh (or of the file) as { type: count }, leaving out the validator's gltf_* ones. */
const ownIssues = (issues: DiagnosisIssue[]) =>
  Object.fromEntries(issues.filter((i) => !i.type.startsWith('gltf_')).map((i) => [i.type, i.count]))

function diagnosisOf(result: JobResult): DiagnosisResult {
  if (!result.ok) throw new Error(result.message)
  expect(result.extension).toBe('json')
  const diagnosis = (result.details as { result: DiagnosisResult }).result
  // The downloadable file is the same result, and both satisfy contract section 2.3.
  expect(JSON.parse(new TextDecoder().decode(result.bytes))).toEqual(diagnosis)
  expect(diagnosisResultSchema.safeParse(diagnosis).error).toBeUndefined()
  return diagnosis
}

describe('diagnose job', async () => {
  const pool = createEnginePool({ threads: 2 })
  const platform = await loadPlatform()
  afterAll(() => pool.destroy())

  it.skipIf(!available)(
    "a zip's diagnosis names the model inside and its version, as the bare file's does, never the container",
    async () => {
      const zipOf = async (...files: string[]) =>
        zipSync(Object.fromEntries(await Promise.all(files.map(async (path) => [basename(path), new Uint8Array(await readFile(path))]))))
      const diagnoseBytes = async (bytes: Uint8Array, format: string) =>
        diagnosisOf(await pool.run({ name: 'diagnose', input: { bytes }, format, options: {} }))
      const kindOf = (diagnosis: DiagnosisResult) => ({ format: diagnosis.format, version: diagnosis.version })
      // glTF with its .bin (2.0 and 1.0): no bare upload reads them, so the versions are the files' own.
      expect(kindOf(await diagnoseBytes(await zipOf(paths.manyCubes, paths.manyCubesBin), 'zip'))).toEqual({
        format: 'gltf',
        version: '2.0',
      })
      expect(kindOf(await diagnoseBytes(await zipOf(paths.twoBoxes, paths.twoBoxesBin), 'zip'))).toEqual({ format: 'gltf', version: '1.0' })
      const cases = [
        ['obj', [paths.spiderObj, paths.spiderMtl], { format: 'obj', version: '' }],
        ['fbx', [paths.fbx], { format: 'fbx', version: expect.stringMatching(/^7\.\d$/) }],
        ['dae', [paths.duck, paths.duckTexture], { format: 'dae', version: '1.4.1' }],
        ['ply', [paths.ply], { format: 'ply', version: '1.0 binary_little_endian' }],
        ['glb', [paths.box], { format: 'glb', version: '2.0' }],
      ] as const
      for (const [format, files, kind] of cases) {
        const bare = kindOf(await diagnoseBytes(new Uint8Array(await readFile(files[0])), format))
        const zipped = kindOf(await diagnoseBytes(await zipOf(...files), 'zip'))
        expect(bare, format).toEqual(kind)
        expect(zipped, format).toEqual(bare)
      }
    },
  )

  it('reports the exact defect counts of a generated model', async () => {
    const bytes = await platform.io.writeBinary(buildDefectiveModel())
    const size = bytes.byteLength // the bytes are moved into the worker
    const diagnosis = diagnosisOf(await pool.run({ name: 'diagnose', input: { bytes }, format: 'glb', options: {} }))
    expect(diagnosis).toMatchObject({ format: 'glb', version: '2.0', file_size_bytes: size })
    const [defective, noNormals] = diagnosis.meshes
    expect(defective).toMatchObject({
      name: 'defective',
      vertices: 32,
      triangles: 38,
      has_normals: true,
      has_texcoords: true,
      skinned: false,
    })
    expect(ownIssues(defective!.issues)).toEqual(DEFECTS.defective)
    expect(ownIssues(noNormals!.issues)).toEqual(DEFECTS.no_normals)
    expect(ownIssues(diagnosis.issues)).toEqual({ ...DEFECTS.file, uncompressed_geometry: 2 })
    const severity = Object.fromEntries(defective!.issues.map((i) => [i.type, i.severity]))
    expect(severity).toMatchObject({
      out_of_range_indices: 'critical',
      non_finite_values: 'high',
      degenerate_faces: 'low',
      duplicate_vertices: 'medium',
    })
    expect(diagnosis.total_issues).toBe(diagnosis.meshes.reduce((n, m) => n + m.issues.length, 0) + diagnosis.issues.length)
    expect(diagnosis.recommendations[0]).toMatch(/^repair \(.*merges 3 duplicate vertices, removes 3 degenerate faces/)
  })

  it.skipIf(!available)('reads real texture sizes from image headers', async () => {
    const png = new Uint8Array(await readFile(paths.boxPng))
    expect(readImageHeader(png)).toEqual({ format: 'png', width: 211, height: 211 })
    const sharp = (await import('sharp')).default
    const image = sharp(png)
    for (const [format, bytes] of [
      ['jpeg', await image.clone().jpeg().toBuffer()],
      ['webp', await image.clone().webp({ lossless: false }).toBuffer()],
      ['webp', await image.clone().webp({ lossless: true }).toBuffer()],
    ] as const) {
      expect(readImageHeader(new Uint8Array(bytes))).toEqual({ format, width: 211, height: 211 })
    }
    // A KTX2 header (identifier, vkFormat, typeSize, pixelWidth, pixelHeight, ...), as toktx writes it.
    const ktx2 = new Uint8Array(80)
    ktx2.set([0xab, 0x4b, 0x54, 0x58, 0x20, 0x32, 0x30, 0xbb, 0x0d, 0x0a, 0x1a, 0x0a])
    new DataView(ktx2.buffer).setUint32(20, 1024, true)
    new DataView(ktx2.buffer).setUint32(24, 512, true)
    expect(readImageHeader(ktx2)).toEqual({ format: 'ktx2', width: 1024, height: 512 })
    expect(readImageHeader(new Uint8Array(16))).toBeNull()
    expect(readImageHeader(png.subarray(0, 20))).toBeNull()
  })

  describe.skipIf(!available)('real files', () => {
    it('2CylinderEngine: every mesh, its degenerate faces, a compression recommendation from its geometry', async () => {
      const diagnosis = diagnosisOf(await pool.run({ name: 'diagnose', input: { path: paths.engine }, format: 'glb', options: {} }))
      expect(diagnosis.meshes).toHaveLength(29)
      const doc = await platform.io.readBinary(new Uint8Array(await readFile(paths.engine)))
      expect(diagnosis.meshes.reduce((n, m) => n + m.triangles, 0)).toBe(countMeshTriangles(doc))
      // The validator counts repeated-index triangles only; ours adds zero-area ones, so never fewer.
      expect(diagnosis.meshes[1]!.issues).toContainEqual({ type: 'degenerate_faces', count: 48, severity: 'low' })
      expect(diagnosis.recommendations.some((r) => /^compress with engine meshopt \(expected savings ~\d+%/.test(r))).toBe(true)
      expect(diagnosis.textures).toEqual([])
    })

    it('BoxTextured and chr_knight: textures with their real size', async () => {
      const box = diagnosisOf(await pool.run({ name: 'diagnose', input: { path: paths.box }, format: 'glb', options: {} }))
      expect(box.textures).toEqual([{ name: 'texture_0', format: 'png', width: 211, height: 211, size_kb: 3 }])
      expect(ownIssues(box.issues)).toMatchObject({ non_power_of_two_texture: 1 })
      const knight = diagnosisOf(await pool.run({ name: 'diagnose', input: { path: paths.knight }, format: 'glb', options: {} }))
      expect(knight.textures).toMatchObject([{ format: 'png', width: 256, height: 1 }])
      expect(knight.meshes[0]).toMatchObject({ has_colors: true, has_texcoords: true })
    })

    it('simple_skin and AnimatedMorphCube: skins, morph targets, animations with channels and duration', async () => {
      const run = (path: string) => pool.run({ name: 'diagnose', input: { bytes: embeddedGltf(path) }, format: 'gltf', options: {} })
      const skin = diagnosisOf(await run(paths.simpleSkin))
      expect(skin.meshes[0]).toMatchObject({ skinned: true, morph_targets: 0 })
      expect(skin.animations).toEqual([{ name: 'animation_0', channels: 1, duration_seconds: 5.5 }])
      const cube = diagnosisOf(await run(paths.morphCube))
      expect(cube.meshes[0]).toMatchObject({ name: 'Cube', skinned: false, morph_targets: 2 })
      expect(cube.animations).toEqual([{ name: 'Square', channels: 1, duration_seconds: 4.2 }])
    })

    it('BoxBadNormals and BoxWithInfinites: their defects, plus the validator findings', async () => {
      const normals = diagnosisOf(await pool.run({ name: 'diagnose', input: { path: paths.badNormals }, format: 'glb', options: {} }))
      expect(ownIssues(normals.meshes[0]!.issues)).toEqual({ invalid_normals: 4 })
      expect(normals.meshes[0]!.issues).toContainEqual({ type: 'gltf_accessor_vector3_non_unit', count: 8, severity: 'high' })
      const infinites = diagnosisOf(await pool.run({ name: 'diagnose', input: { path: paths.infinites }, format: 'glb', options: {} }))
      expect(ownIssues(infinites.meshes[0]!.issues)).toEqual({ non_finite_values: 24 })
    })

    it('broken glTF files: a diagnosis where the data is the file’s, a failure where it is not', async () => {
      const run = (path: string) => pool.run({ name: 'diagnose', input: { bytes: embeddedGltf(path) }, format: 'gltf', options: {} })
      const outOfRange = diagnosisOf(await run(paths.indexOutOfRange))
      expect(outOfRange.meshes[0]!.issues).toContainEqual({ type: 'out_of_range_indices', count: 1, severity: 'critical' })
      const allOutOfRange = diagnosisOf(await run(paths.allIndicesOutOfRange))
      expect(ownIssues(allOutOfRange.meshes[0]!.issues).out_of_range_indices).toBeGreaterThan(1)
      const loop = diagnosisOf(await run(paths.recursiveNodes))
      expect(loop.issues).toContainEqual({ type: 'gltf_node_loop', count: 2, severity: 'high' })
      const noScene = diagnosisOf(await run(paths.noScene))
      expect(noScene.meshes).toEqual([])
      expect(noScene.issues).toContainEqual({ type: 'gltf_unresolved_reference', count: 1, severity: 'high' })

      expect(await run(paths.incorrectVertexArrays)).toEqual({
        ok: false,
        message: 'invalid glTF: bufferView 2 ends at byte 936, past the 514 bytes of buffer 0',
      })
      expect(await run(paths.missingBin)).toEqual({
        ok: false,
        message: 'external resource not available: "BoxTextured0.bin" (embed it, or upload a .glb or a .zip holding it)',
      })
      expect(await run(paths.badArray)).toEqual({
        ok: false,
        message: expect.stringMatching(/^invalid glTF: Type mismatch. .*\(\/meshes\/0\/primitives\)$/),
      })
      const garbage = await pool.run({ name: 'diagnose', input: { bytes: new Uint8Array(64).fill(7) }, format: 'glb', options: {} })
      expect(garbage).toEqual({ ok: false, message: 'not a GLB file (bad magic header)' })
    })
  })
})
