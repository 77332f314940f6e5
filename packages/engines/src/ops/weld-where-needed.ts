import { Primitive, type Accessor, type Document, type Transform } from '@gltf-transform/core'
import { createRowSet, vertexRows } from './vertex-rows.ts'
import { weldPrimitiveBitwise } from './weld-bitwise.ts'

/**
 * glTF-Transform's `weld()`, for the primitives where it changes something. Most exported files are
 * already indexed with one copy of each vertex, and there `weld()` still rebuilds every attribute
 * (2CylinderEngine: 15–50 ms, a sixth to a third of its Draco job; the 1M-triangle grid: 150–210 ms)
 * to give back the same vertices in index order — which neither encoder needs, as both reorder. A
 * primitive is welded when it has no index buffer, has morph targets, leaves a vertex unreferenced,
 * or holds two vertices equal in every attribute (found by hashing: a third to a quarter of the weld).
 */
export function weldWhereNeeded(): Transform {
  return function weldWhereNeededTransform(doc: Document): void {
    for (const mesh of doc.getRoot().listMeshes()) {
      for (const prim of mesh.listPrimitives()) {
        if (needsWeld(prim)) weldPrimitiveBitwise(prim)
      }
      // As weld() does: a primitive welded to nothing draws nothing.
      for (const prim of mesh.listPrimitives()) if (prim.getAttribute('POSITION')?.getCount() === 0) prim.dispose()
      if (mesh.listPrimitives().length === 0) mesh.dispose()
    }
  }
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
  return hasEqualVertices(prim.listAttributes(), count)
}

/**
 * Whether two vertices have the same bytes in every attribute: each vertex's bytes are packed into
 * one row of 32-bit words, then rows are put in an open-addressing table by hash.
 */
function hasEqualVertices(attributes: Accessor[], count: number): boolean {
  const { keys, stride } = vertexRows(attributes, count)
  const add = createRowSet(keys, stride, count)
  for (let vertex = 0; vertex < count; vertex++) if (add(vertex) !== -1) return true
  return false
}
