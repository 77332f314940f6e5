import { readFile } from 'node:fs/promises'
import type { Document, Primitive } from '@gltf-transform/core'
import { quantize, unweld, weld } from '@gltf-transform/functions'
import { describe, expect, it } from 'vitest'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import { loadPlatform } from '../src/index.ts'
import { needsWeld, weldWhereNeeded } from '../src/geometry/weld-where-needed.ts'

const { available, paths } = corpusFiles({
  engine: assimp('glTF2', '2CylinderEngine-glTF-Binary', '2CylinderEngine.glb'),
  knight: shared('glb', 'chr_knight.glb'),
  sphere: shared('glb', 'DenseSphere.glb'),
  box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
})

const primitives = (doc: Document): Primitive[] =>
  doc
    .getRoot()
    .listMeshes()
    .flatMap((mesh) => mesh.listPrimitives())
const vertexCounts = (doc: Document) => primitives(doc).map((prim) => prim.getAttribute('POSITION')!.getCount())

describe.skipIf(!available)('weld where needed', async () => {
  const platform = await loadPlatform()
  const read = async (path: string) => platform.io.readBinary(new Uint8Array(await readFile(path)))

  it('leaves an indexed file with one copy of each vertex as it is (no attribute rebuilt)', async () => {
    const doc = await read(paths.engine)
    const arrays = primitives(doc).flatMap((prim) => prim.listAttributes().map((a) => a.getArray()))
    expect(primitives(doc).some((prim) => needsWeld(prim))).toBe(false)
    await doc.transform(weldWhereNeeded())
    for (const [i, array] of primitives(doc)
      .flatMap((prim) => prim.listAttributes().map((a) => a.getArray()))
      .entries()) {
      expect(array).toBe(arrays[i])
    }
    // weld() itself would merge nothing here: the same counts.
    const welded = await read(paths.engine)
    await welded.transform(weld())
    expect(vertexCounts(welded)).toEqual(vertexCounts(doc))
  })

  // Each case: a real file, possibly changed so that welding matters; weld() is the reference.
  const cases: [string, keyof typeof paths, ((doc: Document) => Promise<unknown>) | undefined, number[]?][] = [
    ['duplicate vertices (chr_knight)', 'knight', undefined],
    ['no index buffer (unwelded)', 'box', (doc) => doc.transform(unweld())],
    ['no index buffer (unwelded sphere)', 'sphere', (doc) => doc.transform(unweld())],
    [
      '8-bit normals and 14-bit positions: 3- and 6-byte vertices',
      'engine',
      (doc) => doc.transform(quantize({ quantizePosition: 14, quantizeNormal: 8 })),
    ],
    [
      'a box with only its positions left: 24 vertices, 8 corners',
      'box',
      async (doc) => {
        for (const prim of primitives(doc))
          for (const semantic of prim.listSemantics()) if (semantic !== 'POSITION') prim.setAttribute(semantic, null)
      },
      [8],
    ],
  ]
  for (const [label, file, prepare, expected] of cases) {
    it(`welds what weld() would merge: ${label}`, async () => {
      const doc = await read(paths[file])
      await prepare?.(doc)
      const reference = await read(paths[file])
      await prepare?.(reference)
      const before = vertexCounts(doc)
      const flagged = primitives(doc).map((prim) => needsWeld(prim))
      await reference.transform(weld())
      await doc.transform(weldWhereNeeded())
      expect(vertexCounts(doc)).toEqual(vertexCounts(reference))
      if (expected) expect(vertexCounts(doc)).toEqual(expected)
      // Flagged exactly where weld() changed something (or had no index buffer to keep).
      const changed = vertexCounts(reference).map((count, i) => count < before[i]! || !primitives(reference)[i])
      expect(flagged.some(Boolean)).toBe(true)
      for (const [i, flag] of flagged.entries()) if (changed[i]) expect(flag).toBe(true)
    })
  }

  it('welds a primitive with a vertex no triangle uses', async () => {
    const doc = await read(paths.box)
    const prim = primitives(doc)[0]!
    for (const accessor of prim.listAttributes()) {
      const array = accessor.getArray()!
      const grown = new (array.constructor as Float32ArrayConstructor)(array.length + accessor.getElementSize())
      grown.set(array)
      accessor.setArray(grown)
    }
    const count = prim.getAttribute('POSITION')!.getCount()
    expect(needsWeld(prim)).toBe(true)
    await doc.transform(weldWhereNeeded())
    expect(primitives(doc)[0]!.getAttribute('POSITION')!.getCount()).toBe(count - 1)
  })
})
