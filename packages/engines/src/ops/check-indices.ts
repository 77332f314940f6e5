import type { Document } from '@gltf-transform/core'
import { ModelInputError } from '../errors.ts'

/**
 * Throws when a primitive's indices point past its vertices. Encoders would otherwise write
 * garbage without complaint; `repair` is the operation that drops such triangles instead.
 */
export function assertIndicesInRange(doc: Document): void {
  for (const mesh of doc.getRoot().listMeshes()) {
    mesh.listPrimitives().forEach((prim, p) => {
      const indices = prim.getIndices()?.getArray()
      const vertices = prim.getAttribute('POSITION')?.getCount() ?? 0
      if (!indices) return
      for (let i = 0; i < indices.length; i++) {
        if (indices[i]! >= vertices) {
          throw new ModelInputError(
            `mesh "${mesh.getName() || 'unnamed'}" primitive ${p}: index ${indices[i]} out of range (${vertices} vertices); run repair first`,
          )
        }
      }
    })
  }
}
