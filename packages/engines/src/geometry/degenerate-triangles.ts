import { Primitive, type Document } from '@gltf-transform/core'

/**
 * Drops triangles that repeat a vertex index: they draw nothing. Welding after quantization turns
 * slivers thinner than the grid into such triangles (a tenth of 2CylinderEngine's); Draco's
 * edgebreaker and gltfpack drop them too. Returns how many were dropped.
 */
export function dropDegenerateTriangles(doc: Document): number {
  let dropped = 0
  for (const mesh of doc.getRoot().listMeshes()) {
    for (const prim of mesh.listPrimitives()) {
      const indices = prim.getIndices()
      if (prim.getMode() !== Primitive.Mode.TRIANGLES || !indices) continue
      const src = indices.getArray()!
      const kept = new (src.constructor as new (n: number) => typeof src)(src.length)
      let n = 0
      for (let i = 0; i + 2 < src.length; i += 3) {
        const a = src[i]!,
          b = src[i + 1]!,
          c = src[i + 2]!
        if (a === b || b === c || a === c) continue
        kept[n++] = a
        kept[n++] = b
        kept[n++] = c
      }
      if (n === src.length) continue
      dropped += (src.length - n) / 3
      if (n === 0) {
        prim.dispose()
        continue
      }
      // A copy of its own: the accessor may be shared with a primitive of another mode.
      prim.setIndices(indices.clone().setArray(kept.slice(0, n)))
    }
  }
  return dropped
}
