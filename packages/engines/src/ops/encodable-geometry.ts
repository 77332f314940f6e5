import type { Document, Mesh, Primitive } from '@gltf-transform/core'
import { ModelInputError } from '../errors.ts'

/**
 * Throws when a primitive cannot be encoded as it is: indices pointing past its vertices, or
 * vertex positions that are not finite numbers. Encoders would otherwise write garbage without
 * complaint (Draco skips the primitive, meshopt's grid collapses it); `repair` is the operation
 * that drops such triangles and vertices instead.
 */
export function assertEncodableGeometry(doc: Document): void {
  for (const mesh of doc.getRoot().listMeshes()) {
    mesh.listPrimitives().forEach((prim, p) => {
      assertIndicesInRange(mesh, prim, p)
      assertFinitePositions(mesh, prim, p)
    })
  }
}

function refuse(mesh: Mesh, p: number, problem: string): never {
  throw new ModelInputError(`mesh "${mesh.getName() || 'unnamed'}" primitive ${p}: ${problem}; run repair first`)
}

function assertIndicesInRange(mesh: Mesh, prim: Primitive, p: number): void {
  const indices = prim.getIndices()?.getArray()
  const vertices = prim.getAttribute('POSITION')?.getCount() ?? 0
  if (!indices) return
  for (let i = 0; i < indices.length; i++) {
    if (indices[i]! >= vertices) refuse(mesh, p, `index ${indices[i]} out of range (${vertices} vertices)`)
  }
}

function assertFinitePositions(mesh: Mesh, prim: Primitive, p: number): void {
  for (const holder of [prim, ...prim.listTargets()]) {
    const values = holder.getAttribute('POSITION')?.getArray()
    if (!values) continue
    for (let i = 0; i < values.length; i++) {
      if (!Number.isFinite(values[i]!))
        refuse(mesh, p, `vertex ${Math.floor(i / 3)} has a position that is not a finite number (${values[i]})`)
    }
  }
}
