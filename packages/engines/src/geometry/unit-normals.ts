import type { Document, Primitive, Transform } from '@gltf-transform/core'
import { ModelInputError } from '../errors.ts'

export const UNIT_NORMALS = 'unitNormals'

/**
 * Makes every float NORMAL a unit vector, as glTF requires: non-unit normals are normalized; zero
 * or non-finite ones (an OBJ face without `vn` in a group that has them, a PLY point without a
 * normal) are replaced by the area-weighted normal of the triangles using the vertex, or +Z when no
 * triangle does. Quantized (integer) normals are left alone. Logs how many normals changed.
 *
 * ```ts
 * await doc.transform(unitNormals())
 * ```
 */
export function unitNormals(): Transform {
  const transform: Transform = (doc: Document) => {
    const changed = normalizeNormals(doc)
    if (changed > 0) doc.getLogger().info(`${UNIT_NORMALS}: ${changed} normals made unit length`)
  }
  Object.defineProperty(transform, 'name', { value: UNIT_NORMALS })
  return transform
}

/** `unitNormals` itself, for a caller that counts what it changed (repair's `normals_normalized`). */
export function normalizeNormals(doc: Document): number {
  let changed = 0
  const done = new Set<unknown>()
  for (const mesh of doc.getRoot().listMeshes()) {
    for (const prim of mesh.listPrimitives()) {
      const normal = prim.getAttribute('NORMAL')
      const array = normal?.getArray()
      if (!normal || !(array instanceof Float32Array) || done.has(normal)) continue
      done.add(normal)
      const count = normal.getCount()
      const broken: number[] = []
      for (let i = 0; i < count; i++) {
        const x = array[i * 3]!,
          y = array[i * 3 + 1]!,
          z = array[i * 3 + 2]!
        const length = Math.hypot(x, y, z)
        if (Math.abs(length - 1) <= 5e-4) continue
        changed++
        if (length > 1e-12 && Number.isFinite(length)) {
          array[i * 3] = x / length
          array[i * 3 + 1] = y / length
          array[i * 3 + 2] = z / length
        } else broken.push(i)
      }
      if (broken.length > 0) fillFromFaces(prim, array, broken)
      normal.setArray(array)
    }
  }
  return changed
}

function fillFromFaces(prim: Primitive, normals: Float32Array, broken: number[]): void {
  const position = prim.getAttribute('POSITION')
  const sums = new Map<number, number[]>(broken.map((i) => [i, [0, 0, 0]]))
  if (position && prim.getMode() === 4) {
    const indices = prim.getIndices()?.getArray()
    const n = indices ? indices.length : position.getCount()
    const a: number[] = [],
      b: number[] = [],
      c: number[] = []
    for (let t = 0; t + 2 < n; t += 3) {
      const ia = indices ? indices[t]! : t,
        ib = indices ? indices[t + 1]! : t + 1,
        ic = indices ? indices[t + 2]! : t + 2
      if (!sums.has(ia) && !sums.has(ib) && !sums.has(ic)) continue
      position.getElement(ia, a)
      position.getElement(ib, b)
      position.getElement(ic, c)
      const ux = b[0]! - a[0]!,
        uy = b[1]! - a[1]!,
        uz = b[2]! - a[2]!
      const vx = c[0]! - a[0]!,
        vy = c[1]! - a[1]!,
        vz = c[2]! - a[2]!
      const face = [uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx]
      for (const i of [ia, ib, ic]) {
        const sum = sums.get(i)
        if (sum) for (let k = 0; k < 3; k++) sum[k]! += face[k]!
      }
    }
  }
  for (const [i, sum] of sums) {
    const length = Math.hypot(sum[0]!, sum[1]!, sum[2]!)
    const unit = length > 0 && Number.isFinite(length) ? sum.map((v) => v / length) : [0, 0, 1]
    normals.set(unit, i * 3)
  }
}

/**
 * Refuses positions that are not finite numbers (no bounds can be written for them, and every
 * reader chokes on them); other float attributes get 0 for non-finite values.
 */
export function checkFiniteAttributes(doc: Document): void {
  for (const mesh of doc.getRoot().listMeshes()) {
    for (const prim of mesh.listPrimitives()) {
      for (const semantic of prim.listSemantics()) {
        const accessor = prim.getAttribute(semantic)!
        const array = accessor.getArray()
        if (!(array instanceof Float32Array)) continue
        let bad = 0
        for (let i = 0; i < array.length; i++) {
          if (!Number.isFinite(array[i]!)) {
            bad++
            if (semantic !== 'POSITION' && semantic !== 'NORMAL') array[i] = 0
          }
        }
        if (bad > 0 && semantic === 'POSITION') {
          throw new ModelInputError(`invalid input: mesh "${mesh.getName()}" has ${bad} non-finite position values (repair fixes them)`)
        }
      }
    }
  }
}
