import type { Document } from '@gltf-transform/core'
import { quantize, reorder, weld } from '@gltf-transform/functions'
import type { MeshoptEncoder } from 'meshoptimizer'
import { describe, expect, it } from 'vitest'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import { loadPlatform } from '../src/index.ts'
import { reorderForSize } from '../src/geometry/reorder-for-size.ts'
import { expectSameGeometry } from './support/same-geometry.ts'

const modes = assimp('glTF2', 'glTF-Asset-Generator', 'Mesh_PrimitiveMode')
const { available, paths } = corpusFiles({
  engine: assimp('glTF2', '2CylinderEngine-glTF-Binary', '2CylinderEngine.glb'),
  knight: shared('glb', 'chr_knight.glb'),
  shapes: shared('glb', 'ShapeCollection.glb'),
  cubes: shared('gltf', 'many-cubes.gltf'),
  morph: assimp('glTF2', 'glTF-Sample-Models', 'AnimatedMorphCube-glTF', 'AnimatedMorphCube.gltf'),
  lines: `${modes}/Mesh_PrimitiveMode_02.gltf`,
  triangles: `${modes}/Mesh_PrimitiveMode_04.gltf`,
})

describe.skipIf(!available)('reorderForSize: the same result as glTF-Transform reorder({ target: "size" })', async () => {
  const platform = await loadPlatform()
  const encoder = platform.meshoptEncoder as typeof MeshoptEncoder

  const cases: [string, keyof typeof paths, ((doc: Document) => Promise<unknown>)?][] = [
    ['2CylinderEngine', 'engine'],
    [
      '2CylinderEngine quantized (6-byte positions, 3-byte normals)',
      'engine',
      (doc) => doc.transform(quantize({ quantizePosition: 14, quantizeNormal: 8 })),
    ],
    ['chr_knight welded', 'knight', (doc) => doc.transform(weld())],
    ['ShapeCollection', 'shapes'],
    ['many-cubes (one buffer for many meshes)', 'cubes'],
    ['a morphing cube (targets move with their vertices)', 'morph'],
    ['indexed lines (reordered by first use only)', 'lines'],
  ]
  for (const [label, file, prepare] of cases) {
    it(label, async () => {
      const [doc, reference] = [await platform.io.read(paths[file]), await platform.io.read(paths[file])]
      for (const d of [doc, reference]) await prepare?.(d)
      await reference.transform(reorder({ encoder, target: 'size' }))
      await doc.transform(reorderForSize({ encoder }))
      expectSameGeometry(doc, reference)
    })
  }

  it('primitives sharing one index buffer and their attributes are reordered once, together', async () => {
    const [doc, reference] = [await platform.io.read(paths.engine), await platform.io.read(paths.engine)]
    for (const d of [doc, reference]) {
      const mesh = d.getRoot().listMeshes()[0]!
      mesh.addPrimitive(mesh.listPrimitives()[0]!.clone())
    }
    await reference.transform(reorder({ encoder, target: 'size' }))
    await doc.transform(reorderForSize({ encoder }))
    expectSameGeometry(doc, reference)
    const prims = doc.getRoot().listMeshes()[0]!.listPrimitives()
    const [a, b] = [prims[0], prims.at(-1)]
    expect(a).not.toBe(b)
    expect(a!.getIndices()).toBe(b!.getIndices())
    expect(a!.getAttribute('POSITION')).toBe(b!.getAttribute('POSITION'))
  })

  it('leaves a file without index buffers as it is', async () => {
    const doc = await platform.io.read(paths.triangles)
    const before = doc
      .getRoot()
      .listAccessors()
      .map((a) => a.getArray())
    await doc.transform(reorderForSize({ encoder }))
    expect(
      doc
        .getRoot()
        .listAccessors()
        .map((a) => a.getArray()),
    ).toEqual(before)
  })
})
