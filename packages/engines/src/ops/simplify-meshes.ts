import { type Accessor, type Document, Primitive } from '@gltf-transform/core'
import { compactPrimitive } from '@gltf-transform/functions'
import type { MeshoptSimplifier, SimplifierFlags } from 'meshoptimizer'
import { primitiveTriangles } from '../geometry-stats.ts'
import { mix32 } from '../geometry/mix32.ts'
import { type MeshDraws, meshDraws } from './mesh-draws.ts'
import { type BudgetItem, type Simplified, solveBudget } from './simplify-budget.ts'

export interface SimplifyMeshesOptions {
  /** meshoptimizer's simplifier, passed in by the caller (see Platform), ready. */
  simplifier: typeof MeshoptSimplifier
  /** Target share of triangles to keep, 0–1 (0: as few as `error` allows). */
  ratio: number
  /** Largest error allowed, relative to each mesh's extent (meshoptimizer's measure). */
  error: number
}

/** What simplification did, for the task's details (triangles counted once per mesh, not per node). */
export interface SimplifyReport {
  triangles_before: number
  triangles_after: number
  /** The largest error of any simplified primitive, relative to its extent. */
  error: number
  /** Primitives left as they were, and why. */
  skipped: string[]
}

/**
 * Attribute weights beside the positions, as gltfpack weighs them: normals count half as much as a
 * position's deviation, vertex colours fully. Texture coordinates are not weighed: a UV seam is
 * two vertices at one position, which the simplifier keeps as a seam.
 */
const WEIGHTS = { NORMAL: 0.5, COLOR_0: 1 } as const

/**
 * Reduces the triangles of every triangle primitive with meshoptimizer's attribute-aware simplifier,
 * the primitives drawn once under one error budget (see simplifyItems). Expects float attributes and
 * welded vertices (the caller dequantizes and welds first, so that seams are the only split
 * vertices). The vertices a primitive shares, by position, with another primitive of its mesh (one
 * per material) are locked: they meet there, and would open into cracks if each moved its own. Other
 * borders move, as gltfpack's default (no `-slb`) lets them: locking every open edge stopped meshes
 * with holes short of the target (suzanne.obj at 0.5: 826 triangles where gltfpack reaches 818 at the
 * same distance). Disconnected specks below the error are pruned (but never a whole primitive: see
 * primitiveItem), as gltfpack prunes them. Skinned meshes are simplified in their bind pose (joints
 * and weights follow the kept vertices) with meshoptimizer's regularization, as gltfpack does for
 * them; morphed ones are skipped, since the simplifier sees only the base shape.
 */
export function simplifyMeshes(doc: Document, options: SimplifyMeshesOptions): SimplifyReport {
  const report: SimplifyReport = { triangles_before: 0, triangles_after: 0, error: 0, skipped: [] }
  const draws = meshDraws(doc)
  const items: PrimitiveItem[] = []
  for (const mesh of doc.getRoot().listMeshes()) {
    const locks = sharedVertexLocks(mesh.listPrimitives().filter((prim) => !unsimplifiable(prim)))
    for (const [index, prim] of mesh.listPrimitives().entries()) {
      const before = primitiveTriangles(prim)
      report.triangles_before += before
      const reason = unsimplifiable(prim)
      if (!reason) items.push(primitiveItem(prim, locks.get(prim) ?? null, draws.get(mesh) ?? UNDRAWN, options))
      else if (before > 0)
        report.skipped.push(`mesh "${mesh.getName() || doc.getRoot().listMeshes().indexOf(mesh)}" primitive ${index}: ${reason}`)
    }
  }
  simplifyItems(items, options).forEach((result, i) => {
    report.error = Math.max(report.error, result.error)
    replaceIndices(doc, items[i]!, result.kept)
  })
  for (const mesh of doc.getRoot().listMeshes()) {
    for (const prim of mesh.listPrimitives()) report.triangles_after += primitiveTriangles(prim)
    if (mesh.listPrimitives().length === 0) mesh.dispose()
  }
  return report
}

/**
 * With a ratio, the primitives the scene draws once share one error budget (simplify-budget.ts), as
 * gltfpack's merge before `-si` makes them one mesh; a mesh drawn by several nodes or instances is
 * reduced to the ratio on its own, as gltfpack keeps it apart, so that the triangles the file holds
 * and those it draws both come to the ratio. A scene drawing every mesh many times over, or a single
 * primitive, or an error limit alone: each primitive goes as far as the ratio and the limit let it.
 */
function simplifyItems(items: PrimitiveItem[], options: SimplifyMeshesOptions): Simplified[] {
  const alone = (item: PrimitiveItem) => item.simplifyTo(Math.floor(options.ratio * item.triangles) * 3)
  const shared = items.filter((item) => item.draws === 1)
  if (shared.length < 2 || options.ratio <= 0 || options.ratio >= 1) return items.map(alone)
  const budget = solveBudget(shared, options.ratio)
  let next = 0 // `shared` keeps the items' order
  return items.map((item) => (item.draws === 1 ? budget[next++]! : alone(item)))
}

function unsimplifiable(prim: Primitive): string | undefined {
  if (prim.getMode() !== Primitive.Mode.TRIANGLES) return 'not a triangle list'
  if (prim.listTargets().length > 0) return 'morph targets (the simplifier sees only the base shape)'
  if (!(prim.getAttribute('POSITION')?.getArray() instanceof Float32Array)) return 'positions are not floats'
  return undefined
}

/** A mesh not drawn by any scene: its triangles count once, at its own size. */
const UNDRAWN: MeshDraws = { draws: 1, scale: 1 }

interface PrimitiveItem extends BudgetItem, MeshDraws {
  prim: Primitive
  indices: Uint32Array
}

/** One primitive, ready for the simplifier: its welded indices, positions and weighed attributes. */
function primitiveItem(prim: Primitive, locks: Uint8Array | null, drawn: MeshDraws, options: SimplifyMeshesOptions): PrimitiveItem {
  const positions = prim.getAttribute('POSITION')!
  const count = positions.getCount()
  const source = prim.getIndices()?.getArray()
  const indices = source ? Uint32Array.from(source) : Uint32Array.from({ length: count }, (_, i) => i)
  const { values, stride, weights } = weighedAttributes(prim, count)
  const xyz = positions.getArray() as Float32Array
  const simplifier = options.simplifier
  const extent = simplifier.getScale(xyz, 3)
  const regularize: SimplifierFlags[] = prim.getAttribute('WEIGHTS_0') ? ['Regularize'] : []
  const run = (target: number, error: number, flags: SimplifierFlags[]): Simplified => {
    const simplify = (more: SimplifierFlags[]) =>
      simplifier.simplifyWithAttributes(indices, xyz, 3, values, stride, weights, locks, target, error, [...more, ...regularize, ...flags])
    let [kept, reached] = simplify(['Prune'])
    // At a large error (simplify_error=1 is the whole extent) pruning drops every piece and the free
    // borders let the rest collapse: a scene of nothing is no result. The primitive then keeps what
    // the simplifier leaves with its borders locked, or, if even that is nothing, stays as it was.
    if (kept.length === 0) [kept, reached] = simplify(['LockBorder'])
    return kept.length === 0 ? { kept: indices, error: 0 } : { kept, error: reached }
  }
  return {
    prim,
    indices,
    triangles: indices.length / 3,
    ...drawn,
    extent,
    cap: options.error * extent,
    simplify(local) {
      const result = run(0, local, ['ErrorAbsolute'])
      return { kept: result.kept, error: extent > 0 ? result.error / extent : 0 }
    },
    simplifyTo: (target) => run(target, options.error, []),
  }
}

/** Puts the kept triangles in place of the primitive's own, and drops the vertices they no longer use. */
function replaceIndices(doc: Document, item: PrimitiveItem, kept: Uint32Array): void {
  if (kept.length === item.indices.length) return
  const { prim } = item
  const previous = prim.getIndices()
  prim.setIndices(doc.createAccessor().setType('SCALAR').setArray(kept).setBuffer(prim.getAttribute('POSITION')!.getBuffer()))
  if (previous && previous.listParents().length === 1) previous.dispose()
  // Drops the vertices no kept triangle uses, and narrows the indices to 16 bits where they fit.
  compactPrimitive(prim)
}

/** The weighed attributes of each vertex, interleaved as the simplifier takes them. */
function weighedAttributes(prim: Primitive, count: number): { values: Float32Array; stride: number; weights: number[] } {
  const used: [Accessor, number, number][] = []
  for (const [semantic, weight] of Object.entries(WEIGHTS)) {
    const accessor = prim.getAttribute(semantic)
    const array = accessor?.getArray()
    // Colours compare on RGB; alpha rarely varies across a mesh and would only slow the search.
    if (accessor && array instanceof Float32Array) used.push([accessor, Math.min(3, accessor.getElementSize()), weight])
  }
  const stride = used.reduce((sum, [, size]) => sum + size, 0)
  const values = new Float32Array(count * stride)
  let offset = 0
  for (const [accessor, size] of used) {
    const array = accessor.getArray() as Float32Array
    const width = accessor.getElementSize()
    for (let v = 0; v < count; v++) for (let c = 0; c < size; c++) values[v * stride + offset + c] = array[v * width + c]!
    offset += size
  }
  return { values, stride, weights: used.flatMap(([, size, weight]) => new Array<number>(size).fill(weight)) }
}

/**
 * For each primitive, 1 on every vertex whose position another primitive of the same mesh also has
 * (compared bit for bit, as welding compares), 0 elsewhere; none for a mesh of one primitive.
 */
function sharedVertexLocks(prims: Primitive[]): Map<Primitive, Uint8Array> {
  const locks = new Map<Primitive, Uint8Array>()
  if (prims.length < 2) return locks
  const bits = prims.map((prim) => {
    const xyz = prim.getAttribute('POSITION')!.getArray() as Float32Array
    return new Uint32Array(xyz.buffer, xyz.byteOffset, xyz.length)
  })
  const index = createPositionIndex(bits.reduce((sum, b) => sum + b.length / 3, 0))
  // Each distinct position's one primitive, or SEVERAL once a second primitive has it.
  const owners: number[] = []
  const positions = bits.map((b, p) =>
    Int32Array.from({ length: b.length / 3 }, (_, v) => {
      const id = index.find(b, v * 3)
      if (id === owners.length)
        owners.push(p) // numbered now: first seen here
      else if (owners[id] !== p) owners[id] = SEVERAL
      return id
    }),
  )
  prims.forEach((prim, p) =>
    locks.set(
      prim,
      Uint8Array.from(positions[p]!, (id) => (owners[id] === SEVERAL ? 1 : 0)),
    ),
  )
  return locks
}

const SEVERAL = -1

/**
 * Numbers distinct positions (three float32 bit patterns) in order of first sight: an open-addressing
 * hash table over typed arrays. A string key per vertex cost a string and a map entry each for what
 * three integer compares decide: two primitives of 500 000 vertices took 2.8 s, now 0.4 s (measured
 * 2026-11-27, the same locks).
 */
function createPositionIndex(capacity: number) {
  let size = 16
  while (size < capacity * 2) size *= 2
  const slots = new Int32Array(size).fill(-1)
  const keys = new Uint32Array(capacity * 3)
  let count = 0
  return {
    /** The number of the position at `bits[at..at+2]`; a new one is the count of those seen before. */
    find(bits: Uint32Array, at: number): number {
      const x = bits[at]!,
        y = bits[at + 1]!,
        z = bits[at + 2]!
      let slot = positionHash(x, y, z) & (size - 1)
      for (;;) {
        const id = slots[slot]!
        if (id === -1) break
        if (keys[id * 3] === x && keys[id * 3 + 1] === y && keys[id * 3 + 2] === z) return id
        slot = (slot + 1) & (size - 1)
      }
      slots[slot] = count
      keys[count * 3] = x
      keys[count * 3 + 1] = y
      keys[count * 3 + 2] = z
      return count++
    },
  }
}

/** The three bit patterns mixed into 32 bits: round coordinates (0.5, 1, 2) have float32 mantissas whose low bits are all zero. */
function positionHash(x: number, y: number, z: number): number {
  return mix32(x ^ Math.imul(y, 0x9e3779b1) ^ Math.imul(z, 0x85ebca77))
}
