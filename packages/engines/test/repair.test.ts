import { Document as GltfDocument, type Document } from '@gltf-transform/core'
import { afterAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { createEnginePool, documentBounds, FORMAT_CODECS, type JobResult, loadPlatform } from '../src/index.ts'
import type { DiagnosisIssue, DiagnosisResult } from '../src/ops/diagnosis-types.ts'
import { repair, type RepairReport } from '../src/ops/repair.ts'
import { buildDefectiveModel, DEFECTS } from './defective-model.ts'
import { embeddedGltf } from '../../../test/support/gltf-fixtures.ts'

const { available, paths } = corpusFiles({
  badNormals: assimp('glTF2', 'BoxBadNormals-glTF-Binary', 'BoxBadNormals.glb'),
  infinites: assimp('glTF2', 'BoxWithInfinites-glTF-Binary', 'BoxWithInfinites.glb'),
  indexOutOfRange: assimp('glTF2', 'IndexOutOfRange', 'IndexOutOfRange.gltf'),
  boxEmbedded: assimp('glTF2', 'BoxTextured-glTF-Embedded', 'BoxTextured.gltf'),
  incorrectVertexArrays: assimp('glTF2', 'IncorrectVertexArrays', 'Cube.gltf'),
  allIndicesOutOfRange: assimp('glTF2', 'IndexOutOfRange', 'AllIndicesOutOfRange.gltf'),
})

/** What diagnose reports as defects repair is meant to remove. */
const REPAIRABLE = [
  'duplicate_vertices',
  'degenerate_faces',
  'missing_normals',
  'invalid_normals',
  'non_finite_values',
  'out_of_range_indices',
  'unused_vertices',
  'empty_nodes',
  'unused_data',
]

const ownIssues = (issues: DiagnosisIssue[]) =>
  Object.fromEntries(issues.filter((i) => !i.type.startsWith('gltf_')).map((i) => [i.type, i.count]))

/** Triangles as sorted corner positions, to compare geometry whatever the vertex order. */
function triangleSet(doc: Document, meshName: string): string[] {
  const mesh = doc
    .getRoot()
    .listMeshes()
    .find((m) => m.getName() === meshName)!
  const out: string[] = []
  for (const prim of mesh.listPrimitives()) {
    const position = prim.getAttribute('POSITION')!
    const indices = prim.getIndices()!.getArray()!
    const corner = (i: number) => position.getElement(indices[i]!, []).join(',')
    for (let t = 0; t < indices.length; t += 3) out.push([corner(t), corner(t + 1), corner(t + 2)].sort().join(' | '))
  }
  return out.sort()
}

describe('repair job', async () => {
  const pool = createEnginePool({ threads: 2 })
  const platform = await loadPlatform()
  afterAll(() => pool.destroy())

  const repairs = (result: JobResult) => {
    if (!result.ok) throw new Error(result.message)
    return (result.details as { repairs: RepairReport }).repairs
  }
  const diagnoseBytes = async (bytes: Uint8Array, format: string) => {
    const result = await pool.run({ name: 'diagnose', input: { bytes: bytes.slice() }, format, options: {} })
    if (!result.ok) throw new Error(result.message)
    return (result.details as { result: DiagnosisResult }).result
  }

  it('removes exactly the defects of a generated model, keeping the valid triangles and the bounds', async () => {
    const input = buildDefectiveModel()
    const bytes = await platform.io.writeBinary(input)
    const result = await pool.run({ name: 'repair', input: { bytes }, format: 'glb', options: {} })
    expect(repairs(result)).toEqual({
      duplicate_vertices_merged: 3,
      degenerate_faces_removed: 3,
      normals_recomputed: 3 + 4, // three broken, four missing
      normals_normalized: 0,
      non_finite_values_fixed: 2,
      non_finite_faces_removed: 1,
      out_of_range_faces_removed: 1,
      unused_vertices_removed: 2 + 1, // two unused, and the one whose only face had a NaN corner
      empty_primitives_removed: 0,
      empty_nodes_removed: 2,
      unused_removed: 2,
      weights_normalized: 0,
    })
    if (!result.ok) return
    expect(result.extension).toBe('glb')

    const after = await diagnoseBytes(result.bytes!, 'glb')
    const found = [...after.meshes.flatMap((m) => m.issues), ...after.issues].map((i) => i.type)
    expect(found.filter((type) => REPAIRABLE.includes(type))).toEqual([])
    // Topology is the modeller's call: the fin stays.
    expect(ownIssues(after.meshes[0]!.issues)).toEqual({ non_manifold_edges: DEFECTS.defective.non_manifold_edges })

    const output = await platform.io.readBinary(result.bytes!)
    expect(documentBounds(output)).toEqual(DEFECTS.bounds)
    const valid = triangleSet(input, 'defective').filter((t) => !/NaN/.test(t))
    expect(triangleSet(output, 'defective')).toHaveLength(DEFECTS.validTriangles)
    // Every output triangle is one of the input's valid, non-degenerate ones.
    for (const triangle of triangleSet(output, 'defective')) expect(valid).toContain(triangle)
    expect(new Set(triangleSet(output, 'defective')).size).toBe(DEFECTS.validTriangles)
    expect(triangleSet(output, 'no_normals')).toEqual(triangleSet(input, 'no_normals'))
    const normal = output.getRoot().listMeshes()[1]!.listPrimitives()[0]!.getAttribute('NORMAL')!
    expect(normal.getElement(0, [])).toEqual([0, 0, 1])
  })

  it('works as a glTF-Transform transform, reporting the same counts', async () => {
    let report: RepairReport | undefined
    await buildDefectiveModel().transform(repair({ onReport: (r) => (report = r) }))
    expect(report).toMatchObject({
      duplicate_vertices_merged: 3,
      degenerate_faces_removed: 3,
      normals_recomputed: 7,
      empty_nodes_removed: 2,
    })
  })

  it('unrolls a stitched triangle strip, drops its zero-area stitches, keeps the morph target aligned', async () => {
    const doc = new GltfDocument()
    const buffer = doc.createBuffer()
    const accessor = (type: 'VEC3' | 'SCALAR', array: Float32Array | Uint16Array) =>
      doc.createAccessor().setType(type).setArray(array).setBuffer(buffer)
    // Two quads (x 0..1 and 2..3) in one strip, joined by repeated indices: 8 triangles, 4 of them stitches.
    const corners = [0, 0, 0, 0, 1, 0, 1, 0, 0, 1, 1, 0, 2, 0, 0, 2, 1, 0, 3, 0, 0, 3, 1, 0]
    const deltas = Array.from({ length: 24 }, (_, i) => (i % 3 === 2 ? (i + 1) / 30 : 0))
    const prim = doc
      .createPrimitive()
      .setMode(5) // TRIANGLE_STRIP
      .setAttribute('POSITION', accessor('VEC3', new Float32Array(corners)))
      .setAttribute(
        'NORMAL',
        accessor(
          'VEC3',
          new Float32Array(24).map((_, i) => (i % 3 === 2 ? 1 : 0)),
        ),
      )
      .setIndices(accessor('SCALAR', new Uint16Array([0, 1, 2, 3, 3, 4, 4, 5, 6, 7])))
      .addTarget(doc.createPrimitiveTarget().setAttribute('POSITION', accessor('VEC3', new Float32Array(deltas))))
    doc.createScene().addChild(doc.createNode().setMesh(doc.createMesh('strip').addPrimitive(prim).setWeights([0.5])))
    const bytes = await platform.io.writeBinary(doc)

    const before = await diagnoseBytes(bytes, 'glb')
    expect(before.meshes[0]).toMatchObject({ triangles: 8, morph_targets: 1 })
    expect(ownIssues(before.meshes[0]!.issues)).toEqual({ degenerate_faces: 4 })

    const result = await pool.run({ name: 'repair', input: { bytes }, format: 'glb', options: {} })
    expect(repairs(result)).toMatchObject({ degenerate_faces_removed: 4, duplicate_vertices_merged: 0, unused_vertices_removed: 0 })
    if (!result.ok) return
    const out = (await platform.io.readBinary(result.bytes!)).getRoot().listMeshes()[0]!.listPrimitives()[0]!
    expect(out.getMode()).toBe(4)
    expect(out.getIndices()!.getCount()).toBe(4 * 3)
    const position = out.getAttribute('POSITION')!
    const delta = out.listTargets()[0]!.getAttribute('POSITION')!
    expect(delta.getCount()).toBe(position.getCount())
    for (let v = 0; v < position.getCount(); v++) {
      const p = position.getElement(v, [])
      const original = corners.findIndex((_, i) => i % 3 === 0 && corners[i] === p[0] && corners[i + 1] === p[1]) / 3
      expect(delta.getElement(v, [])).toEqual([0, 0, Math.fround(deltas[original * 3 + 2]!)])
    }
    expect(ownIssues((await diagnoseBytes(result.bytes!, 'glb')).meshes[0]!.issues)).toEqual({})
  })

  it('refuses a primitive whose attributes have different vertex counts; diagnose reports it', async () => {
    const doc = new GltfDocument()
    const buffer = doc.createBuffer()
    const prim = doc
      .createPrimitive()
      .setAttribute(
        'POSITION',
        doc
          .createAccessor()
          .setType('VEC3')
          .setArray(new Float32Array([0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0]))
          .setBuffer(buffer),
      )
      .setAttribute(
        'NORMAL',
        doc
          .createAccessor()
          .setType('VEC3')
          .setArray(new Float32Array([0, 0, 1, 0, 0, 1, 0, 0, 1]))
          .setBuffer(buffer),
      )
    doc.createScene().addChild(doc.createNode().setMesh(doc.createMesh('uneven').addPrimitive(prim)))
    const bytes = await platform.io.writeBinary(doc)
    const diagnosis = await diagnoseBytes(bytes, 'glb')
    expect(diagnosis.meshes[0]!.issues).toContainEqual({ type: 'gltf_mesh_primitive_unequal_accessor_count', count: 1, severity: 'high' })
    expect(await pool.run({ name: 'repair', input: { bytes }, format: 'glb', options: {} })).toEqual({
      ok: false,
      message: 'cannot repair mesh "uneven": its vertex attributes have different counts (POSITION 4, another 3)',
    })
  })

  describe.skipIf(!available)('real files', () => {
    it('BoxBadNormals, IndexOutOfRange: repaired, then diagnosed clean', async () => {
      const cases = [
        { path: paths.badNormals, format: 'glb', bytes: undefined, fixed: 'normals_recomputed' },
        { path: paths.badNormals, format: 'glb', bytes: undefined, fixed: 'normals_normalized' },
        { path: paths.indexOutOfRange, format: 'gltf', bytes: embeddedGltf(paths.indexOutOfRange), fixed: 'out_of_range_faces_removed' },
      ] as const
      for (const c of cases) {
        const input = c.bytes ? { bytes: c.bytes.slice() } : { path: c.path }
        const result = await pool.run({ name: 'repair', input, format: c.format, options: {} })
        expect(repairs(result)[c.fixed], c.path).toBeGreaterThan(0)
        if (!result.ok) continue
        const outputFormat = result.extension === 'glb' ? 'glb' : c.format
        if (result.extension !== 'glb') continue // a zipped .gltf is read back by the zip reader's own tests
        const after = await diagnoseBytes(result.bytes!, outputFormat)
        const found = after.meshes.flatMap((m) => m.issues).map((i) => i.type)
        expect(
          found.filter((type) => REPAIRABLE.includes(type)),
          c.path,
        ).toEqual([])
      }
    })

    it('answers in the input format where a writer exists; otherwise glb, and says so', async () => {
      const result = await pool.run({ name: 'repair', input: { bytes: embeddedGltf(paths.boxEmbedded) }, format: 'gltf', options: {} })
      if (!result.ok) throw new Error(result.message)
      if (FORMAT_CODECS.gltf?.write) {
        expect(result.extension).toBe('zip')
      } else {
        expect(result.extension).toBe('glb')
        expect(result.details).toMatchObject({ output_format: 'glb', output_format_note: 'no gltf writer: written as glb' })
      }
    })

    it('BoxWithInfinites, AllIndicesOutOfRange: nothing valid to keep is a failure, not an empty file', async () => {
      // Every vertex of BoxWithInfinites has an infinite x: no face has a place in space.
      expect(await pool.run({ name: 'repair', input: { path: paths.infinites }, format: 'glb', options: {} })).toEqual({
        ok: false,
        message: 'nothing valid to keep: all 12 faces have an out-of-range index or a corner with a non-finite position',
      })
      const all = await pool.run({
        name: 'repair',
        input: { bytes: embeddedGltf(paths.allIndicesOutOfRange) },
        format: 'gltf',
        options: {},
      })
      expect(all).toMatchObject({ ok: false, message: expect.stringMatching(/^nothing valid to keep: all 12 faces/) })
    })

    it('turns unreadable input into a failed result', async () => {
      const bad = await pool.run({ name: 'repair', input: { bytes: new Uint8Array(64).fill(7) }, format: 'glb', options: {} })
      expect(bad).toEqual({ ok: false, message: 'not a GLB file (bad magic header)' })
      // Views past the end of their buffer: glTF-Transform would read memory that is not the file's.
      const overrun = await pool.run({
        name: 'repair',
        input: { bytes: embeddedGltf(paths.incorrectVertexArrays) },
        format: 'gltf',
        options: {},
      })
      expect(overrun).toEqual({
        ok: false,
        message: expect.stringMatching(/^invalid glTF: bufferView \d+ ends at byte \d+, past the \d+ bytes of buffer \d+$/),
      })
    })
  })
})
