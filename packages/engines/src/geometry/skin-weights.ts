import type { Accessor, Document, Primitive } from '@gltf-transform/core'

/**
 * glTF-Validator's test for one vertex (ACCESSOR_WEIGHTS_NON_NORMALIZED): the non-zero weights of
 * distinct joints, summed in float32 in set order, may miss 1 by at most 2e-7 per weight summed.
 */
function validatorAccepts(weights: number[], joints: number[]): boolean {
  let sum = 0
  let tolerance = 0
  const seen = new Set<number>()
  for (let i = 0; i < weights.length; i++) {
    const weight = weights[i]!
    if (weight === 0 || seen.has(joints[i]!)) continue
    seen.add(joints[i]!)
    sum = Math.fround(sum + weight)
    tolerance += 2e-7
  }
  return Math.abs(sum - 1) <= tolerance
}

/** The largest integer a normalized component type stands for (1.0); 0 for float. */
function unitOf(accessor: Accessor): number {
  if (!accessor.getNormalized()) return 0
  const array = accessor.getArray()
  return array instanceof Uint8Array ? 255 : array instanceof Uint16Array ? 65535 : 0
}

/**
 * Renormalises the skin weights of every primitive so each vertex's weights sum to 1, as glTF
 * requires (assimp hands FBX weights over as they were stored, often off by 1e-4 and more):
 * non-finite and negative weights become 0, a joint listed twice keeps one slot with both weights,
 * a weight of 0 points at joint 0, and the rest are scaled to sum 1 in the accessor's own component
 * type (normalized integers add up to exactly 255 or 65535; floats pass the validator's float32
 * sum). A vertex with no weight at all is bound to its first joint. Returns the vertices changed.
 */
export function normalizeSkinWeights(doc: Document): number {
  let changed = 0
  const done = new Set<Accessor>()
  for (const mesh of doc.getRoot().listMeshes()) {
    for (const prim of mesh.listPrimitives()) changed += normalizePrimitive(prim, done)
  }
  return changed
}

function skinSets(prim: Primitive): { joints: Accessor; weights: Accessor }[] {
  const sets: { joints: Accessor; weights: Accessor }[] = []
  for (let set = 0; ; set++) {
    const joints = prim.getAttribute(`JOINTS_${set}`)
    const weights = prim.getAttribute(`WEIGHTS_${set}`)
    if (!joints || !weights) return sets
    sets.push({ joints, weights })
  }
}

function normalizePrimitive(prim: Primitive, done: Set<Accessor>): number {
  const sets = skinSets(prim)
  // Accessors shared with another primitive are normalised once (a second pass would find them valid anyway).
  if (sets.length === 0 || sets.every((set) => done.has(set.weights))) return 0
  for (const set of sets) done.add(set.weights)
  const count = Math.min(...sets.map((set) => Math.min(set.weights.getCount(), set.joints.getCount())))
  const units = sets.map((set) => unitOf(set.weights))
  const weights: number[] = []
  const joints: number[] = []
  const element: number[] = []
  let changed = 0
  for (let v = 0; v < count; v++) {
    weights.length = 0
    joints.length = 0
    for (const set of sets) {
      weights.push(...set.weights.getElement(v, element))
      joints.push(...set.joints.getElement(v, element))
    }
    if (validatorAccepts(weights, joints)) continue
    normalizeVertex(weights, joints, units)
    sets.forEach((set, s) => {
      set.weights.setElement(v, weights.slice(s * 4, s * 4 + 4))
      set.joints.setElement(v, joints.slice(s * 4, s * 4 + 4))
    })
    changed++
  }
  return changed
}

/** Normalises one vertex's weights in place (4 per set; `units[s]` is set s's integer 1.0, 0 for float). */
function normalizeVertex(weights: number[], joints: number[], units: number[]): void {
  const firstSlot = new Map<number, number>()
  for (let i = 0; i < weights.length; i++) {
    const weight = weights[i]!
    if (!(weight > 0) || !Number.isFinite(weight)) weights[i] = 0
    else if (firstSlot.has(joints[i]!)) {
      weights[firstSlot.get(joints[i]!)!]! += weight
      weights[i] = 0
    } else firstSlot.set(joints[i]!, i)
  }
  const sum = weights.reduce((a, b) => a + b, 0)
  if (sum === 0) weights[0] = 1
  else for (let i = 0; i < weights.length; i++) weights[i]! /= sum
  // Quantize to each set's type, then give what rounding left over to the largest weight.
  let largest = 0
  for (let i = 0; i < weights.length; i++) {
    const unit = units[Math.floor(i / 4)]!
    if (unit > 0) weights[i] = Math.round(weights[i]! * unit) / unit
    else weights[i] = Math.fround(weights[i]!)
    if (weights[i]! > weights[largest]!) largest = i
  }
  const others = weights.reduce((n, w, i) => (i === largest ? n : n + w), 0)
  const unit = units[Math.floor(largest / 4)]!
  const rest = 1 - others
  weights[largest] = unit > 0 ? Math.round(rest * unit) / unit : Math.fround(rest)
  // The validator warns about a joint listed with weight 0 unless it is joint 0.
  for (let i = 0; i < weights.length; i++) if (weights[i] === 0) joints[i] = 0
}
