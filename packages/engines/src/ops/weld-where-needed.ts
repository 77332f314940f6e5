import { Primitive, type Accessor, type Document, type Transform } from '@gltf-transform/core'
import { weldPrimitive } from '@gltf-transform/functions'

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
        if (needsWeld(prim)) weldPrimitive(prim)
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
  let tableSize = 1
  while (tableSize < count * 2) tableSize <<= 1
  const mask = tableSize - 1
  const table = new Int32Array(tableSize).fill(-1)
  for (let vertex = 0; vertex < count; vertex++) {
    const row = vertex * stride
    let h = 0x9e3779b9
    for (let i = row; i < row + stride; i++) h = Math.imul(h ^ keys[i]!, 0x85ebca6b) ^ (h >>> 13)
    let slot = h & mask
    for (;;) {
      const other = table[slot]!
      if (other === -1) {
        table[slot] = vertex
        break
      }
      let same = true
      for (let i = 0, o = other * stride; i < stride && same; i++) same = keys[row + i] === keys[o + i]
      if (same) return true
      slot = (slot + 1) & mask
    }
  }
  return false
}

/** Every vertex's attribute bytes as one row of words (an attribute of 6 bytes takes 2 words, zero-padded). */
function vertexRows(attributes: Accessor[], count: number): { keys: Uint32Array; stride: number } {
  const sizes = attributes.map((accessor) => accessor.getElementSize() * accessor.getComponentSize())
  const stride = sizes.reduce((sum, bytes) => sum + Math.ceil(bytes / 4), 0)
  const keys = new Uint32Array(count * stride)
  const keyBytes = new Uint8Array(keys.buffer)
  let column = 0
  attributes.forEach((accessor, a) => {
    const array = accessor.getArray()!
    const bytes = sizes[a]!
    if (bytes % 4 === 0 && array.byteOffset % 4 === 0) {
      const words = bytes / 4
      const src = new Uint32Array(array.buffer, array.byteOffset, count * words)
      for (let vertex = 0; vertex < count; vertex++) {
        for (let w = 0; w < words; w++) keys[vertex * stride + column + w] = src[vertex * words + w]!
      }
    } else {
      const src = new Uint8Array(array.buffer, array.byteOffset, count * bytes)
      for (let vertex = 0; vertex < count; vertex++) {
        for (let b = 0; b < bytes; b++) keyBytes[(vertex * stride + column) * 4 + b] = src[vertex * bytes + b]!
      }
    }
    column += Math.ceil(bytes / 4)
  })
  return { keys, stride }
}
