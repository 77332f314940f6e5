import type { Accessor, Primitive } from '@gltf-transform/core'
import { canonicalVertices, vertexAccessors } from './vertex-rows.ts'

/**
 * Geometry checks shared by diagnose (which counts) and repair (which fixes), so that "repair
 * removes exactly what diagnose reports" holds by construction, not by two parallel definitions.
 */

/** A primitive's drawn elements as a flat index list: strips, fans and loops unrolled. */
export interface PrimitiveElements {
  /** Indices per element: 1 points, 2 lines, 3 triangles. */
  size: 1 | 2 | 3
  /** Element corners, `size` per element, as stored (may be out of range). */
  indices: Uint32Array
  /** Vertices of the primitive (POSITION count). */
  vertexCount: number
  /** Whether the primitive has an index accessor. */
  indexed: boolean
}

const MODE = { POINTS: 0, LINES: 1, LINE_LOOP: 2, LINE_STRIP: 3, TRIANGLES: 4, TRIANGLE_STRIP: 5, TRIANGLE_FAN: 6 } as const

/** Unrolls a primitive into a list of points, lines or triangles (glTF 2.0 §3.7.2.1 winding). */
export function primitiveElements(prim: Primitive): PrimitiveElements {
  const vertexCount = prim.getAttribute('POSITION')?.getCount() ?? 0
  const stored = prim.getIndices()?.getArray()
  const n = stored ? stored.length : vertexCount
  const at = stored ? (i: number) => stored[i]! : (i: number) => i
  const mode = prim.getMode()
  const indexed = stored !== undefined
  const out: number[] = []
  switch (mode) {
    case MODE.POINTS:
      return { size: 1, indices: Uint32Array.from({ length: n }, (_, i) => at(i)), vertexCount, indexed }
    case MODE.LINES:
      for (let i = 0; i + 1 < n; i += 2) out.push(at(i), at(i + 1))
      return { size: 2, indices: Uint32Array.from(out), vertexCount, indexed }
    case MODE.LINE_LOOP:
    case MODE.LINE_STRIP:
      for (let i = 0; i + 1 < n; i++) out.push(at(i), at(i + 1))
      if (mode === MODE.LINE_LOOP && n > 2) out.push(at(n - 1), at(0))
      return { size: 2, indices: Uint32Array.from(out), vertexCount, indexed }
    case MODE.TRIANGLE_STRIP:
      for (let i = 0; i + 2 < n; i++) out.push(at(i), at(i + 1 + (i % 2)), at(i + 2 - (i % 2)))
      return { size: 3, indices: Uint32Array.from(out), vertexCount, indexed }
    case MODE.TRIANGLE_FAN:
      for (let i = 1; i + 1 < n; i++) out.push(at(i), at(i + 1), at(0))
      return { size: 3, indices: Uint32Array.from(out), vertexCount, indexed }
    default: {
      const count = n - (n % 3)
      const indices = new Uint32Array(count)
      for (let i = 0; i < count; i++) indices[i] = at(i)
      return { size: 3, indices, vertexCount, indexed }
    }
  }
}

/** Mode of the list form of a primitive's elements. */
export function listModeForSize(size: 1 | 2 | 3): number {
  return size === 1 ? MODE.POINTS : size === 2 ? MODE.LINES : MODE.TRIANGLES
}

/**
 * An accessor's elements as plain numbers, denormalized (normalized integers become floats the way
 * a renderer reads them).
 */
export function readElements(accessor: Accessor): ArrayLike<number> {
  const array = accessor.getArray()
  if (!array) return new Float32Array(0)
  if (!accessor.getNormalized()) return array
  const size = accessor.getElementSize()
  const out = new Float32Array(accessor.getCount() * size)
  const element: number[] = []
  for (let i = 0; i < accessor.getCount(); i++) {
    accessor.getElement(i, element)
    for (let k = 0; k < size; k++) out[i * size + k] = element[k]!
  }
  return out
}

/** Cross product of a triangle's edges (twice its area, oriented), in float64. */
export function triangleCross(position: ArrayLike<number>, a: number, b: number, c: number, out: Float64Array): Float64Array {
  const ax = position[a * 3]!
  const ay = position[a * 3 + 1]!
  const az = position[a * 3 + 2]!
  const ux = position[b * 3]! - ax
  const uy = position[b * 3 + 1]! - ay
  const uz = position[b * 3 + 2]! - az
  const vx = position[c * 3]! - ax
  const vy = position[c * 3 + 1]! - ay
  const vz = position[c * 3 + 2]! - az
  out[0] = uy * vz - uz * vy
  out[1] = uz * vx - ux * vz
  out[2] = ux * vy - uy * vx
  return out
}

/** Vertices with a non-finite POSITION component; such a vertex has no place in space. */
export function nonFinitePositions(position: ArrayLike<number>, vertexCount: number): Uint8Array {
  const bad = new Uint8Array(vertexCount)
  for (let v = 0; v < vertexCount; v++) {
    if (!Number.isFinite(position[v * 3]!) || !Number.isFinite(position[v * 3 + 1]!) || !Number.isFinite(position[v * 3 + 2]!)) bad[v] = 1
  }
  return bad
}

/** Non-finite components of a float accessor (integer accessors cannot hold any). */
export function countNonFinite(accessor: Accessor): number {
  const array = accessor.getArray()
  if (!(array instanceof Float32Array)) return 0
  let count = 0
  for (let i = 0; i < array.length; i++) if (!Number.isFinite(array[i]!)) count++
  return count
}

/** True when a normal cannot be used: a non-finite component or zero length. */
export function isInvalidNormal(normal: ArrayLike<number>, v: number): boolean {
  const x = normal[v * 3]!
  const y = normal[v * 3 + 1]!
  const z = normal[v * 3 + 2]!
  return !Number.isFinite(x) || !Number.isFinite(y) || !Number.isFinite(z) || x * x + y * y + z * z === 0
}

/** Whether a triangle is degenerate: a repeated index, or zero area (its corners on one line). */
export function isDegenerateTriangle(position: ArrayLike<number>, a: number, b: number, c: number, scratch: Float64Array): boolean {
  if (a === b || b === c || a === c) return true
  const n = triangleCross(position, a, b, c, scratch)
  return n[0] === 0 && n[1] === 0 && n[2] === 0
}

/** Exact defect counts of one primitive; the meaning of each is in docs/diagnose.md. */
export interface PrimitiveDefects {
  duplicateVertices: number
  degenerateFaces: number
  missingNormals: number
  invalidNormals: number
  nonFiniteValues: number
  outOfRangeIndices: number
  unusedVertices: number
  nonManifoldEdges: number
}

/** Counts every defect of a primitive without changing it. */
export function countPrimitiveDefects(prim: Primitive): PrimitiveDefects {
  const defects: PrimitiveDefects = {
    duplicateVertices: 0,
    degenerateFaces: 0,
    missingNormals: 0,
    invalidNormals: 0,
    nonFiniteValues: 0,
    outOfRangeIndices: 0,
    unusedVertices: 0,
    nonManifoldEdges: 0,
  }
  const positionAccessor = prim.getAttribute('POSITION')
  if (!positionAccessor) return defects
  const elements = primitiveElements(prim)
  const { vertexCount } = elements
  const triangles = elements.size === 3
  defects.duplicateVertices = canonicalVertices(vertexAccessors(prim), vertexCount).duplicates
  defects.nonFiniteValues = countNonFiniteValues(prim, triangles)
  if (triangles) Object.assign(defects, countNormalDefects(prim.getAttribute('NORMAL'), vertexCount))
  Object.assign(defects, countIndexDefects(elements))
  if (triangles) Object.assign(defects, countTriangleDefects(positionAccessor, elements.indices, vertexCount))
  return defects
}

/** Non-finite components of every attribute, but for the normals of triangles. */
function countNonFiniteValues(prim: Primitive, triangles: boolean): number {
  let count = 0
  for (const semantic of prim.listSemantics()) {
    // On triangles a bad normal is counted (and fixed) as a normal, not as a value.
    if (semantic === 'NORMAL' && triangles) continue
    count += countNonFinite(prim.getAttribute(semantic)!)
  }
  return count
}

/** Vertices of a triangle primitive without normals (all of them when NORMAL is absent), or with unusable ones. */
function countNormalDefects(
  normalAccessor: Accessor | null,
  vertexCount: number,
): Pick<PrimitiveDefects, 'missingNormals' | 'invalidNormals'> {
  if (!normalAccessor) return { missingNormals: vertexCount, invalidNormals: 0 }
  const normal = readElements(normalAccessor)
  let invalidNormals = 0
  for (let v = 0; v < vertexCount; v++) if (isInvalidNormal(normal, v)) invalidNormals++
  return { missingNormals: 0, invalidNormals }
}

/** Indices past the vertices, and (for an indexed primitive) vertices no element uses. */
function countIndexDefects(elements: PrimitiveElements): Pick<PrimitiveDefects, 'outOfRangeIndices' | 'unusedVertices'> {
  const { indices, vertexCount } = elements
  let outOfRangeIndices = 0
  let unusedVertices = 0
  const used = new Uint8Array(vertexCount)
  for (let i = 0; i < indices.length; i++) {
    if (indices[i]! >= vertexCount) outOfRangeIndices++
    else used[indices[i]!] = 1
  }
  if (elements.indexed) for (let v = 0; v < vertexCount; v++) if (!used[v]) unusedVertices++
  return { outOfRangeIndices, unusedVertices }
}

/**
 * Degenerate triangles, and edges (over positions, so a seam of split vertices is one edge) shared
 * by more than two of the other triangles. Triangles with an out-of-range index or a non-finite
 * corner are left to those counts.
 */
function countTriangleDefects(
  positionAccessor: Accessor,
  indices: Uint32Array,
  vertexCount: number,
): Pick<PrimitiveDefects, 'degenerateFaces' | 'nonManifoldEdges'> {
  const position = readElements(positionAccessor)
  const badPosition = nonFinitePositions(position, vertexCount)
  const positionIds = canonicalVertices([positionAccessor], vertexCount).canonical
  let degenerateFaces = 0
  // Edge keys (lo * vertexCount + hi over position ids), sorted: a run longer than two is an
  // edge shared by more than two faces. A sorted typed array beats a Map by ~10x at 1M faces.
  const edges = new Float64Array(indices.length)
  let edgeCount = 0
  const scratch = new Float64Array(3)
  const key = (p: number, q: number) => (p < q ? p * vertexCount + q : q * vertexCount + p)
  for (let t = 0; t + 2 < indices.length; t += 3) {
    const a = indices[t]!
    const b = indices[t + 1]!
    const c = indices[t + 2]!
    if (a >= vertexCount || b >= vertexCount || c >= vertexCount) continue
    if (badPosition[a] || badPosition[b] || badPosition[c]) continue
    if (isDegenerateTriangle(position, a, b, c, scratch)) {
      degenerateFaces++
      continue
    }
    const pa = positionIds[a]!
    const pb = positionIds[b]!
    const pc = positionIds[c]!
    edges[edgeCount++] = key(pa, pb)
    edges[edgeCount++] = key(pb, pc)
    edges[edgeCount++] = key(pc, pa)
  }
  return { degenerateFaces, nonManifoldEdges: countRunsLongerThanTwo(edges.subarray(0, edgeCount).sort()) }
}

/** Values of a sorted list that stand in it more than twice. */
function countRunsLongerThanTwo(sorted: Float64Array): number {
  let runs = 0
  for (let i = 0; i < sorted.length; ) {
    let j = i + 1
    while (j < sorted.length && sorted[j] === sorted[i]) j++
    if (j - i > 2) runs++
    i = j
  }
  return runs
}
