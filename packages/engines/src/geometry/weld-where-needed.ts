import { Primitive, type Transform } from '@gltf-transform/core'
import { canonicalVertices } from './vertex-rows.ts'
import { weldBitwise } from './weld-bitwise.ts'

/**
 * glTF-Transform's `weld()`, for the primitives where it changes something. Most exported files are
 * already indexed with one copy of each vertex, and there `weld()` still rebuilds every attribute
 * (2CylinderEngine: 15–50 ms, a sixth to a third of its Draco job; the 1M-triangle grid: 150–210 ms)
 * to give back the same vertices in index order — which neither encoder needs, as both reorder. A
 * primitive is welded when it has no index buffer, has morph targets, leaves a vertex unreferenced,
 * or holds two vertices equal in every attribute (canonicalVertices: a third to a quarter of the weld).
 */
export function weldWhereNeeded(): Transform {
  return weldBitwise({ where: needsWeld })
}

export function needsWeld(prim: Primitive): boolean {
  if (prim.getMode() === Primitive.Mode.POINTS) return false
  const indices = prim.getIndices()?.getArray()
  const position = prim.getAttribute('POSITION')
  if (!position) return false // nothing to weld on (and weldPrimitive would throw)
  if (!indices || prim.listTargets().length > 0) return true
  const count = position.getCount()
  const used = new Uint8Array(count)
  for (let i = 0; i < indices.length; i++) used[indices[i]!] = 1
  if (used.indexOf(0) !== -1) return true
  return canonicalVertices(prim.listAttributes(), count).duplicates > 0
}
