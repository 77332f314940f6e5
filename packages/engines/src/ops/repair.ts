import { type Accessor, type Document, type Primitive, PropertyType, type Transform } from '@gltf-transform/core'
import { prune } from '@gltf-transform/functions'
import { ModelInputError } from '../errors.ts'
import {
  isDegenerateTriangle,
  isInvalidNormal,
  listModeForSize,
  nonFinitePositions,
  primitiveElements,
  type PrimitiveElements,
  readElements,
  triangleCross,
} from '../geometry/mesh-defects.ts'
import { normalizeSkinWeights } from '../geometry/skin-weights.ts'
import { normalizeNormals } from '../geometry/unit-normals.ts'
import { canonicalVertices, vertexAccessors } from '../geometry/vertex-rows.ts'

/** What repair fixed, by defect; the names are those of the task record's `repairs` field (docs/repair.md). */
export interface RepairReport {
  duplicate_vertices_merged: number
  degenerate_faces_removed: number
  normals_recomputed: number
  /** Normals that were not unit length (glTF-Validator's ACCESSOR_VECTOR3_NON_UNIT), normalized. */
  normals_normalized: number
  non_finite_values_fixed: number
  /** Faces (or lines, points) dropped because a corner had a non-finite position. */
  non_finite_faces_removed: number
  out_of_range_faces_removed: number
  unused_vertices_removed: number
  empty_primitives_removed: number
  empty_nodes_removed: number
  /** Properties nothing used in the input: meshes, materials, textures, accessors, skins, cameras, animations. */
  unused_removed: number
  /** Skinned vertices whose weights did not sum to 1 (glTF-Validator's ACCESSOR_WEIGHTS_NON_NORMALIZED). */
  weights_normalized: number
}

export interface RepairOptions {
  /** Receives the counts once the transform has run. */
  onReport?: (report: RepairReport) => void
}

/** Repair has no knobs yet: every fix it makes is one a valid file never needs undone. */
export const REPAIR_DEFAULTS: Required<Omit<RepairOptions, 'onReport'>> = {}

/**
 * Repairs a model in place: drops faces with out-of-range indices or non-finite positions,
 * replaces other non-finite values by 0, recomputes missing or broken (zero, NaN) normals, merges
 * vertices identical in every attribute, drops degenerate faces (repeated index or zero area),
 * removes vertices no face uses, then empty nodes and unused data. Valid faces and the bounds of
 * the valid geometry are kept.
 *
 * ```ts
 * let counts
 * await doc.transform(repair({ onReport: (report) => (counts = report) }))
 * ```
 */
export function repair(options: RepairOptions = {}): Transform {
  return async function repairTransform(doc: Document): Promise<void> {
    const report = await repairDocument(doc)
    options.onReport?.(report)
  }
}

/** Runs the repair on a document and returns what it fixed. */
export async function repairDocument(doc: Document): Promise<RepairReport> {
  const report: RepairReport = {
    duplicate_vertices_merged: 0,
    degenerate_faces_removed: 0,
    normals_recomputed: 0,
    normals_normalized: 0,
    non_finite_values_fixed: 0,
    non_finite_faces_removed: 0,
    out_of_range_faces_removed: 0,
    unused_vertices_removed: 0,
    empty_primitives_removed: 0,
    empty_nodes_removed: 0,
    unused_removed: 0,
    weights_normalized: 0,
  }
  // Unused data first, counted as found in the input; then the geometry, whose emptied
  // primitives may leave more to prune.
  await pruneCounting(doc, report, true)
  const elementsBefore = countElements(doc)
  const replaced = new Set<Accessor>()
  for (const mesh of doc.getRoot().listMeshes()) {
    for (const prim of mesh.listPrimitives()) repairPrimitive(doc, prim, report, replaced)
  }
  // After the broken normals were recomputed: what is left off unit length is only too long or too short.
  report.normals_normalized = normalizeNormals(doc)
  // After the non-finite weights became 0, so those vertices are renormalised too.
  report.weights_normalized = normalizeSkinWeights(doc)
  // An empty file is no repair: say why instead (e.g. every vertex has an infinite coordinate).
  if (elementsBefore > 0 && countElements(doc) === 0) {
    throw new ModelInputError(
      `nothing valid to keep: all ${elementsBefore} faces have an out-of-range index or a corner with a non-finite position`,
    )
  }
  // Accessors the repair itself replaced are not the file's unused data: dispose them uncounted.
  for (const accessor of replaced) {
    if (accessor.listParents().every((parent) => parent.propertyType === PropertyType.ROOT)) accessor.dispose()
  }
  await pruneCounting(doc, report, false)
  return report
}

function countElements(doc: Document): number {
  let total = 0
  for (const mesh of doc.getRoot().listMeshes()) {
    for (const prim of mesh.listPrimitives()) {
      const elements = primitiveElements(prim)
      total += elements.indices.length / elements.size
    }
  }
  return total
}

/** Property types counted as unused data (the lists diagnose checks, see unused-data.ts). */
const UNUSED_DATA_TYPES: ReadonlySet<string> = new Set([
  PropertyType.MESH,
  PropertyType.MATERIAL,
  PropertyType.TEXTURE,
  PropertyType.ACCESSOR,
  PropertyType.SKIN,
  PropertyType.CAMERA,
  PropertyType.ANIMATION,
])

/**
 * glTF-Transform's prune, limited to what is truly unused: vertex attributes, solid-colour
 * textures and extras stay (a pipeline after us may need them). The first pass counts the input's
 * unused data; the second only the nodes the geometry repair emptied (what else it removes, such
 * as the material of a primitive that lost every face, follows from counts already reported).
 */
async function pruneCounting(doc: Document, report: RepairReport, countUnused: boolean): Promise<void> {
  const graph = doc.getGraph()
  const onDispose = (event: { target: unknown }) => {
    const type = (event.target as { propertyType?: string }).propertyType ?? ''
    if (type === PropertyType.NODE) report.empty_nodes_removed++
    else if (countUnused && UNUSED_DATA_TYPES.has(type)) report.unused_removed++
  }
  graph.addEventListener('node:dispose', onDispose as never)
  try {
    await doc.transform(prune({ keepAttributes: true, keepIndices: true, keepSolidTextures: true, keepExtras: true, keepLeaves: false }))
  } finally {
    graph.removeEventListener('node:dispose', onDispose as never)
  }
}

type WorkingArray = ArrayLike<number> & { [i: number]: number }

/** One primitive under repair: its elements, which of them stay, and the edited copies of its attributes. */
interface PrimitiveRepair {
  doc: Document
  prim: Primitive
  report: RepairReport
  /** Corners per element (3 for triangles, 2 lines, 1 points). */
  size: PrimitiveElements['size']
  indices: Uint32Array
  vertexCount: number
  elementCount: number
  position: ArrayLike<number>
  /** 1 for each element kept. */
  keep: Uint8Array
  /** Working copies: accessors may be shared with other primitives, which must not see our edits. */
  attributes: Map<Accessor, WorkingArray>
  changed: boolean
}

/** Where each kept vertex goes once the unused ones are removed. */
interface Compaction {
  newIndex: Int32Array
  /** Kept vertices, in their original order. */
  order: number[]
  used: number
}

/** Repairs one primitive in the phases the `repair` doc lists; writes new accessors only if a phase changed something. */
function repairPrimitive(doc: Document, prim: Primitive, report: RepairReport, replaced: Set<Accessor>): void {
  const positionAccessor = prim.getAttribute('POSITION')
  if (!positionAccessor) return
  const { size, indices, vertexCount } = primitiveElements(prim)
  assertEqualCounts(prim, vertexCount)
  const elementCount = indices.length / size
  const work: PrimitiveRepair = {
    doc,
    prim,
    report,
    size,
    indices,
    vertexCount,
    elementCount,
    position: readElements(positionAccessor),
    keep: new Uint8Array(elementCount).fill(1),
    attributes: new Map(),
    changed: false,
  }
  dropElements(work, (v) => v >= vertexCount, 'out_of_range_faces_removed')
  dropNonFinitePositions(work)
  zeroNonFiniteValues(work)
  if (size === 3) recomputeBrokenNormals(work, positionAccessor)
  const { remapped, duplicates } = mergeDuplicates(work)
  if (size === 3) dropDegenerateTriangles(work, remapped)
  const compaction = compact(work, remapped)
  const unused = vertexCount - duplicates - compaction.used
  if (unused > 0) work.changed = true
  report.unused_vertices_removed += unused
  if (work.changed) writeRepaired(work, positionAccessor, remapped, compaction, replaced)
}

/** Merging and compacting pair up every attribute's n-th element: unequal counts have no answer. */
function assertEqualCounts(prim: Primitive, vertexCount: number): void {
  for (const accessor of vertexAccessors(prim)) {
    if (accessor.getCount() !== vertexCount || !accessor.getArray()) {
      const mesh =
        prim
          .listParents()
          .find((parent) => parent.propertyType === PropertyType.MESH)
          ?.getName() ?? ''
      throw new ModelInputError(
        `cannot repair mesh "${mesh}": its vertex attributes have different counts (POSITION ${vertexCount}, another ${accessor.getCount()})`,
      )
    }
  }
}

/** Drops each kept element with a corner `bad` says so of, counting it under `counter`. */
function dropElements(work: PrimitiveRepair, bad: (vertex: number) => boolean, counter: keyof RepairReport): void {
  const { size, indices, keep } = work
  for (let e = 0; e < work.elementCount; e++) {
    if (!keep[e]) continue
    for (let k = 0; k < size; k++) {
      if (bad(indices[e * size + k]!)) {
        keep[e] = 0
        work.report[counter]++
        work.changed = true
        break
      }
    }
  }
}

/** A vertex without a finite position has no place: its faces go, the vertex follows as unused. */
function dropNonFinitePositions(work: PrimitiveRepair): void {
  const { position } = work
  const badPosition = nonFinitePositions(position, work.vertexCount)
  for (let i = 0; i < position.length; i++) {
    if (!Number.isFinite(position[i]!)) work.report.non_finite_values_fixed++
  }
  dropElements(work, (v) => badPosition[v] === 1, 'non_finite_faces_removed')
}

/** The working copy of an accessor's values, made on first edit. */
function working(work: PrimitiveRepair, accessor: Accessor): WorkingArray {
  let array = work.attributes.get(accessor)
  if (!array) {
    array = Float32Array.from(readElements(accessor))
    work.attributes.set(accessor, array)
  }
  return array
}

/** Other non-finite values (texture coordinates, colours, weights...) become 0. */
function zeroNonFiniteValues(work: PrimitiveRepair): void {
  const { prim } = work
  for (const semantic of prim.listSemantics()) {
    if (semantic === 'POSITION' || (semantic === 'NORMAL' && work.size === 3)) continue
    const accessor = prim.getAttribute(semantic)!
    if (!(accessor.getArray() instanceof Float32Array)) continue
    const values = accessor.getArray()!
    let fixed = 0
    for (let i = 0; i < values.length; i++) if (!Number.isFinite(values[i]!)) fixed++
    if (fixed === 0) continue
    const array = working(work, accessor)
    for (let i = 0; i < array.length; i++) if (!Number.isFinite(array[i]!)) array[i] = 0
    work.report.non_finite_values_fixed += fixed
    work.changed = true
  }
}

/** Missing, zero or NaN normals of a triangle primitive are computed from its kept faces. */
function recomputeBrokenNormals(work: PrimitiveRepair, positionAccessor: Accessor): void {
  const { doc, prim, vertexCount } = work
  const normalAccessor = prim.getAttribute('NORMAL')
  const existing = normalAccessor ? readElements(normalAccessor) : null
  const broken: number[] = []
  for (let v = 0; v < vertexCount; v++) if (!existing || isInvalidNormal(existing, v)) broken.push(v)
  if (broken.length === 0) return
  // Vertices of the kept faces; a vertex only dropped faces use is removed below anyway.
  const computed = computeNormals(work.position, work.indices, work.keep, vertexCount)
  if (!normalAccessor) {
    const created = doc
      .createAccessor()
      .setType('VEC3')
      .setArray(new Float32Array(vertexCount * 3))
      .setBuffer(positionAccessor.getBuffer())
    prim.setAttribute('NORMAL', created)
    work.attributes.set(created, computed)
  } else {
    const array = working(work, normalAccessor)
    for (const v of broken) for (let k = 0; k < 3; k++) array[v * 3 + k] = computed[v * 3 + k]!
  }
  work.report.normals_recomputed += broken.length
  work.changed = true
}

/** Merge on the values as they now are, so the output has no duplicate left: the indices onto canonical vertices. */
function mergeDuplicates(work: PrimitiveRepair): { remapped: Uint32Array; duplicates: number } {
  const { doc, indices, vertexCount } = work
  const accessors = vertexAccessors(work.prim)
  const current = accessors.map((accessor) => {
    const array = work.attributes.get(accessor)
    return array ? withArray(doc, accessor, array) : accessor
  })
  const { canonical, duplicates } = canonicalVertices(current, vertexCount)
  for (const accessor of current) if (!accessors.includes(accessor)) accessor.dispose()
  if (duplicates > 0) work.changed = true
  work.report.duplicate_vertices_merged += duplicates
  const remapped = new Uint32Array(indices.length)
  for (let i = 0; i < indices.length; i++) remapped[i] = indices[i]! < vertexCount ? canonical[indices[i]!]! : 0
  return { remapped, duplicates }
}

/** Triangles with a repeated corner or zero area (after merging) go. */
function dropDegenerateTriangles(work: PrimitiveRepair, remapped: Uint32Array): void {
  const scratch = new Float64Array(3)
  for (let e = 0; e < work.elementCount; e++) {
    if (!work.keep[e]) continue
    if (isDegenerateTriangle(work.position, remapped[e * 3]!, remapped[e * 3 + 1]!, remapped[e * 3 + 2]!, scratch)) {
      work.keep[e] = 0
      work.report.degenerate_faces_removed++
      work.changed = true
    }
  }
}

/** Compact: keep used vertices in their original order. */
function compact(work: PrimitiveRepair, remapped: Uint32Array): Compaction {
  const { size, keep } = work
  const newIndex = new Int32Array(work.vertexCount).fill(-1)
  let used = 0
  const order: number[] = []
  for (let e = 0; e < work.elementCount; e++) {
    if (!keep[e]) continue
    for (let k = 0; k < size; k++) {
      const v = remapped[e * size + k]!
      if (newIndex[v] === -1) {
        newIndex[v] = 0
        order.push(v)
      }
    }
  }
  order.sort((a, b) => a - b)
  for (const v of order) newIndex[v] = used++
  return { newIndex, order, used }
}

/** Writes the kept elements and vertices as new accessors (or disposes a primitive left empty). */
function writeRepaired(
  work: PrimitiveRepair,
  positionAccessor: Accessor,
  remapped: Uint32Array,
  compaction: Compaction,
  replaced: Set<Accessor>,
): void {
  const { doc, prim, size, keep } = work
  const { newIndex, used } = compaction
  const kept: number[] = []
  for (let e = 0; e < work.elementCount; e++) if (keep[e]) for (let k = 0; k < size; k++) kept.push(newIndex[remapped[e * size + k]!]!)
  if (kept.length === 0) {
    prim.dispose()
    work.report.empty_primitives_removed++
    return
  }
  const rewrite = (accessor: Accessor) => compactedAccessor(work, accessor, compaction, replaced)
  for (const semantic of prim.listSemantics()) prim.setAttribute(semantic, rewrite(prim.getAttribute(semantic)!))
  for (const target of prim.listTargets()) {
    for (const semantic of target.listSemantics()) target.setAttribute(semantic, rewrite(target.getAttribute(semantic)!))
  }

  const identity = size === 1 && kept.every((v, i) => v === i)
  const oldIndices = prim.getIndices()
  if (oldIndices) replaced.add(oldIndices)
  prim.setIndices(
    identity
      ? null
      : doc
          .createAccessor()
          .setType('SCALAR')
          .setArray(used <= 0xffff ? Uint16Array.from(kept) : Uint32Array.from(kept))
          .setBuffer(positionAccessor.getBuffer()),
  )
  prim.setMode(listModeForSize(size) as never)
}

/** An accessor holding only the kept vertices' values; the old one is marked replaced. */
function compactedAccessor(work: PrimitiveRepair, accessor: Accessor, { order, used }: Compaction, replaced: Set<Accessor>): Accessor {
  const source = work.attributes.get(accessor)
  const original = accessor.getArray()!
  const elementSize = accessor.getElementSize()
  // Edited values are floats; untouched ones keep their original component type and bytes.
  const values = source ?? original
  const Ctor = source ? Float32Array : (original.constructor as new (length: number) => typeof original)
  const array = new Ctor(used * elementSize)
  for (let i = 0; i < order.length; i++) {
    for (let k = 0; k < elementSize; k++) array[i * elementSize + k] = values[order[i]! * elementSize + k]!
  }
  replaced.add(accessor)
  return work.doc
    .createAccessor(accessor.getName())
    .setType(accessor.getType())
    .setArray(array)
    .setNormalized(source ? false : accessor.getNormalized())
    .setBuffer(accessor.getBuffer())
}

/**
 * Area-weighted vertex normals of the kept triangles (the unnormalized cross product weighs each
 * face by its area, so slivers barely count and zero-area faces not at all). A vertex whose
 * faces cancel out takes the normal of its first face.
 */
function computeNormals(position: ArrayLike<number>, indices: Uint32Array, keep: Uint8Array, vertexCount: number): Float32Array {
  const sum = new Float64Array(vertexCount * 3)
  const first = new Float64Array(vertexCount * 3)
  const cross = new Float64Array(3)
  for (let t = 0; t < keep.length; t++) {
    if (!keep[t]) continue
    const a = indices[t * 3]!
    const b = indices[t * 3 + 1]!
    const c = indices[t * 3 + 2]!
    triangleCross(position, a, b, c, cross)
    for (const v of [a, b, c]) {
      for (let k = 0; k < 3; k++) sum[v * 3 + k] = sum[v * 3 + k]! + cross[k]!
      if (first[v * 3] === 0 && first[v * 3 + 1] === 0 && first[v * 3 + 2] === 0) first.set(cross, v * 3)
    }
  }
  const out = new Float32Array(vertexCount * 3)
  for (let v = 0; v < vertexCount; v++) {
    let source = sum
    let length = Math.hypot(sum[v * 3]!, sum[v * 3 + 1]!, sum[v * 3 + 2]!)
    if (!(length > 0) || !Number.isFinite(length)) {
      source = first
      length = Math.hypot(first[v * 3]!, first[v * 3 + 1]!, first[v * 3 + 2]!)
    }
    if (!(length > 0) || !Number.isFinite(length)) {
      out[v * 3 + 2] = 1 // no face with an area: any unit vector will do
      continue
    }
    for (let k = 0; k < 3; k++) out[v * 3 + k] = source[v * 3 + k]! / length
  }
  return out
}

/** A throwaway accessor over edited values, so duplicate detection sees the values as they now are. */
function withArray(doc: Document, accessor: Accessor, array: ArrayLike<number>): Accessor {
  return doc.createAccessor().setType(accessor.getType()).setArray(Float32Array.from(array))
}
