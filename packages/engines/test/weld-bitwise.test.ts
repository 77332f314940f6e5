import type { Document } from '@gltf-transform/core'
import { quantize, unweld, weld } from '@gltf-transform/functions'
import { describe, expect, it } from 'vitest'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import { loadPlatform } from '../src/index.ts'
import { weldBitwise } from '../src/geometry/weld-bitwise.ts'
import { expectSameGeometry } from './support/same-geometry.ts'

const modes = assimp('glTF2', 'glTF-Asset-Generator', 'Mesh_PrimitiveMode')
const { available, paths } = corpusFiles({
  engine: assimp('glTF2', '2CylinderEngine-glTF-Binary', '2CylinderEngine.glb'),
  knight: shared('glb', 'chr_knight.glb'),
  sphere: shared('glb', 'DenseSphere.glb'),
  shapes: shared('glb', 'ShapeCollection.glb'),
  cubes: shared('gltf', 'many-cubes.gltf'),
  morph: assimp('glTF2', 'glTF-Sample-Models', 'AnimatedMorphCube-glTF', 'AnimatedMorphCube.gltf'),
  points: `${modes}/Mesh_PrimitiveMode_00.gltf`,
  lines: `${modes}/Mesh_PrimitiveMode_01.gltf`,
  strip: `${modes}/Mesh_PrimitiveMode_05.gltf`,
  triangles: `${modes}/Mesh_PrimitiveMode_04.gltf`,
})

describe.skipIf(!available)('weldBitwise: the same result as glTF-Transform weld()', async () => {
  const platform = await loadPlatform()
  const pair = async (path: string, prepare?: (doc: Document) => Promise<unknown>) => {
    const docs = [await platform.io.read(path), await platform.io.read(path)] as const
    for (const doc of docs) await prepare?.(doc)
    return docs
  }

  const cases: [string, keyof typeof paths, ((doc: Document) => Promise<unknown>)?][] = [
    ['2CylinderEngine as read', 'engine'],
    [
      '2CylinderEngine on 14-bit positions and 8-bit normals (3- and 6-byte rows)',
      'engine',
      (doc) => doc.transform(quantize({ quantizePosition: 14, quantizeNormal: 8 })),
    ],
    ['chr_knight (duplicate vertices)', 'knight'],
    ['DenseSphere without an index buffer', 'sphere', (doc) => doc.transform(unweld())],
    ['ShapeCollection', 'shapes'],
    ['many-cubes (one buffer for many meshes)', 'cubes'],
    ['a morphing cube (targets weld with their vertices)', 'morph'],
    ['points (left alone)', 'points'],
    ['lines', 'lines'],
    ['a triangle strip', 'strip'],
    ['unindexed triangles', 'triangles'],
  ]
  for (const [label, file, prepare] of cases) {
    it(label, async () => {
      const [doc, reference] = await pair(paths[file], prepare)
      await reference.transform(weld())
      await doc.transform(weldBitwise())
      expectSameGeometry(doc, reference)
    })
  }

  it('merges what is equal: a cube of 24 vertices keeps its 8 corners once only positions are left', async () => {
    const [doc] = await pair(paths.cubes)
    const prim = doc.getRoot().listMeshes()[0]!.listPrimitives()[0]!
    expect(prim.getAttribute('POSITION')!.getCount()).toBe(24)
    for (const semantic of prim.listSemantics()) if (semantic !== 'POSITION') prim.setAttribute(semantic, null)
    await doc.transform(weldBitwise())
    expect(doc.getRoot().listMeshes()[0]!.listPrimitives()[0]!.getAttribute('POSITION')!.getCount()).toBe(8)
  })

  it('welds a malformed primitive whose normals are fewer than its positions, as weld() does, instead of throwing', async () => {
    const [doc, reference] = await pair(paths.cubes)
    for (const d of [doc, reference]) {
      const normal = d.getRoot().listMeshes()[0]!.listPrimitives()[0]!.getAttribute('NORMAL')!
      normal.setArray(normal.getArray()!.slice(0, 12 * 3) as Float32Array)
    }
    await reference.transform(weld())
    await doc.transform(weldBitwise())
    const count = (d: Document) => d.getRoot().listMeshes()[0]!.listPrimitives()[0]!.getAttribute('POSITION')!.getCount()
    expect(count(doc)).toBe(count(reference))
  })
})
