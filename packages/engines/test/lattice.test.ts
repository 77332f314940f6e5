import { readFile } from 'node:fs/promises'
import { Document } from '@gltf-transform/core'
import type { Transform as UvTransform } from '@gltf-transform/extensions'
import { afterAll, describe, expect, it } from 'vitest'
import { corpusFiles, shared } from '../../../test/support/corpus.ts'
import { createEnginePool, loadPlatform } from '../src/index.ts'
import { readModel } from '../src/io/index.ts'
import { findAxisSteps, findPositionLattice } from '../src/geometry/lattice.ts'
import { compressFileWith } from './support/compress-file.ts'

const { available, paths } = corpusFiles({
  knight: shared('glb', 'chr_knight.glb'),
  cow: shared('obj', 'cow.obj'),
})

/** A document with one mesh whose positions are `positions` (xyz triples), optionally with a morph target. */
function meshOf(positions: number[], morph = false): Document {
  const doc = new Document()
  const accessor = (array: Float32Array) => doc.createAccessor().setType('VEC3').setArray(array)
  const prim = doc.createPrimitive().setAttribute('POSITION', accessor(new Float32Array(positions)))
  if (morph) prim.addTarget(doc.createPrimitiveTarget().setAttribute('POSITION', accessor(new Float32Array(positions.length))))
  doc.createScene().addChild(doc.createNode().setMesh(doc.createMesh().addPrimitive(prim)))
  return doc
}

/** xyz triples of every point k·step + origin for k on a grid of `side`³ points. */
function latticePoints(side: number, step: number, origin: number[]): number[] {
  const out: number[] = []
  for (let x = 0; x < side; x++)
    for (let y = 0; y < side; y++)
      for (let z = 0; z < side; z++) out.push(origin[0]! + x * step, origin[1]! + y * step, origin[2]! + z * step)
  return out
}

const meshes = (doc: Document) => doc.getRoot().listMeshes()

describe('findPositionLattice', () => {
  it('finds the step and origin of positions on a lattice, float32 rounding and all', () => {
    expect(findPositionLattice(meshes(meshOf(latticePoints(5, 1, [-10, -0.5, 3]))), 16382)).toEqual({ step: 1, origin: [-10, -0.5, 3] })
    const tenths = findPositionLattice(meshes(meshOf(latticePoints(12, 0.1, [0, 0, 0]))), 16382)
    expect(tenths?.step).toBeCloseTo(0.1, 7)
  })

  it('finds none off a lattice, finer than the grid, or with morph targets', () => {
    // A few values always lie near some fine lattice (and are then kept closer than the grid would keep them): many, not.
    const off = latticePoints(6, 1, [0, 0, 0]).map((v, i) => (i % 3 === 1 ? Math.sin(i) * 10 : v))
    expect(findPositionLattice(meshes(meshOf(off)), 16382)).toBeUndefined()
    expect(findPositionLattice(meshes(meshOf(latticePoints(4, 1, [0, 0, 0]))), 2)).toBeUndefined()
    expect(findPositionLattice(meshes(meshOf(latticePoints(4, 1, [0, 0, 0]), true)), 16382)).toBeUndefined()
  })

  it('finds each axis its own step for texture coordinates (a whole fraction of the smallest gap), none where an axis is off one or too fine', () => {
    const palette = new Float32Array([0.5 / 256, 0.5, 9.5 / 256, 0.5, 200.5 / 256, 0.5])
    expect(findAxisSteps([palette], 2, 4095)).toEqual([1 / 256, undefined])
    const [u, v] = findAxisSteps([new Float32Array([0, 0, 0.25, 0.1, 0.5, 0.37])], 2, 4095)
    expect(u).toBe(0.25)
    expect(v).toBeCloseTo(0.01, 7)
    expect(findAxisSteps([new Float32Array([0, 0, 0.25, 0.1, 0.5, 0.37])], 2, 1)).toEqual([undefined, undefined])
    expect(findAxisSteps([new Float32Array([0, 0, 0.25, 1 / 3, 0.5, Math.PI / 3])], 2, 4095)).toEqual([0.25, undefined])
  })

  it.skipIf(!available)('finds none on a scanned mesh (cow.obj)', async () => {
    const platform = await loadPlatform()
    const cow = await readModel(platform, new Uint8Array(await readFile(paths.cow)), 'obj')
    expect(findPositionLattice(meshes(cow), 16382)).toBeUndefined()
  })
})

/** Every drawn position in world space, per axis as a sorted set of values. */
function worldAxes(doc: Document): number[][] {
  const axes = [new Set<number>(), new Set<number>(), new Set<number>()]
  for (const node of doc.getRoot().listNodes()) {
    const m = node.getWorldMatrix()
    for (const prim of node.getMesh()?.listPrimitives() ?? []) {
      const position = prim.getAttribute('POSITION')!
      const v: number[] = []
      for (let i = 0; i < position.getCount(); i++) {
        const [x, y, z] = position.getElement(i, v) as [number, number, number]
        for (let k = 0; k < 3; k++) axes[k]!.add(m[k]! * x + m[4 + k]! * y + m[8 + k]! * z + m[12 + k]!)
      }
    }
  }
  return axes.map((axis) => [...axis].sort((a, b) => a - b))
}

describe.skipIf(!available)('compress with meshopt on a lattice', async () => {
  const platform = await loadPlatform()
  const pool = createEnginePool({ threads: 1 })
  afterAll(() => pool.destroy())
  const compressFile = compressFileWith(pool, platform)

  it('keeps every position of a voxel model exactly (chr_knight: the grid across its bounds moved them by up to 1.8e-4)', async () => {
    const { input, output } = await compressFile(paths.knight, { engine: 'meshopt' })
    const before = worldAxes(input)
    const after = worldAxes(output)
    expect(after.map((axis) => axis.length)).toEqual(before.map((axis) => axis.length))
    after.forEach((axis, k) => axis.forEach((value, i) => expect(Math.abs(value - before[k]![i]!)).toBeLessThan(1e-6)))
  })

  it("keeps its texture coordinates exactly too (chr_knight's are texel centres of a 256-texel palette)", async () => {
    const { input, output } = await compressFile(paths.knight, { engine: 'meshopt' })
    const uvs = (doc: Document) => {
      const prim = doc.getRoot().listMeshes()[0]!.listPrimitives()[0]!
      const transform = prim.getMaterial()!.getBaseColorTextureInfo()!.getExtension<UvTransform>('KHR_texture_transform')
      const [ox, oy] = transform?.getOffset() ?? [0, 0]
      const [sx, sy] = transform?.getScale() ?? [1, 1]
      const uv = prim.getAttribute('TEXCOORD_0')!
      return Array.from({ length: uv.getCount() }, (_, i) => {
        const [u = 0, v = 0] = uv.getElement(i, [])
        return `${Math.fround(ox + sx * u).toFixed(7)} ${Math.fround(oy + sy * v).toFixed(7)}`
      })
    }
    expect(new Set(uvs(output))).toEqual(new Set(uvs(input)))
  })
})
