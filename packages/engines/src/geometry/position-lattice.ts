import type { Mesh } from '@gltf-transform/core'

/**
 * A lattice every position of a scene lies on: coordinate = origin[axis] + k · step, k an integer.
 * Voxel models (chr_knight: 19 × 16 × 9 values, one unit apart), CAD boxes and files quantized
 * before (gltfpack's own output, dequantized) are drawn on one. Quantized on its lattice instead of
 * on a 14-bit grid across the bounds, such a mesh keeps every position exactly, and its integers
 * step by 1 where the grid's step by about 910: meshopt's codec codes those deltas in fewer bits
 * (chr_knight's positions: 8 402 B coded on the grid, 2 356 on its lattice; the file 15 088 → 8 972 B).
 */
export interface PositionLattice {
  step: number
  origin: [number, number, number]
}

/**
 * How far from a lattice point a coordinate may lie and still count as on it, in steps: float32
 * stores 0.1 · k with a relative error of 6e-8, far inside this; a real mesh off its lattice is
 * off by much more.
 */
const ON_LATTICE = 1e-3

/**
 * The lattice of the meshes' positions with at most `maxSteps` steps across the scene's longest
 * axis (a lattice finer than the grid the caller would otherwise use is no gain), or undefined.
 * Morphed meshes have none: their deltas would have to lie on it too, and rarely do.
 * Bounded in time by `maxSteps`: a scan stops at the first axis with more distinct values.
 */
export function findPositionLattice(meshes: readonly Mesh[], maxSteps: number): PositionLattice | undefined {
  const values = [new Set<number>(), new Set<number>(), new Set<number>()]
  for (const mesh of meshes) {
    for (const prim of mesh.listPrimitives()) {
      if (prim.listTargets().some((target) => target.getAttribute('POSITION'))) return undefined
      const position = prim.getAttribute('POSITION')
      const array = position?.getArray()
      if (!position || !(array instanceof Float32Array) || position.getType() !== 'VEC3') return undefined
      for (let i = 0; i < array.length; i++) {
        const axis = values[i % 3]!
        axis.add(array[i]!)
        if (axis.size > maxSteps + 1) return undefined
      }
    }
  }
  const sorted = values.map((axis) => Float64Array.from(axis).sort())
  if (sorted.some((axis) => axis.length === 0 || !Number.isFinite(axis[0]!) || !Number.isFinite(axis.at(-1)!))) return undefined
  const step = latticeStep(sorted, maxSteps)
  if (!step) return undefined
  const origin = sorted.map((axis) => axis[0]!) as [number, number, number]
  return sorted.every((axis, k) => axis.every((v) => onLattice((v - origin[k]!) / step))) ? { step, origin } : undefined
}

/**
 * The candidate step: the smallest gap between neighbouring values of any axis, refined over the
 * longest axis (its whole span divided by the whole number of steps it holds), so that a float
 * gap a little off does not add up over thousands of steps. A scene with one value per axis (a
 * point) has no step.
 */
function latticeStep(sorted: Float64Array[], maxSteps: number): number | undefined {
  let gap = Infinity
  for (const axis of sorted) for (let i = 1; i < axis.length; i++) gap = Math.min(gap, axis[i]! - axis[i - 1]!)
  if (!Number.isFinite(gap)) return undefined
  const spans = sorted.map((axis) => axis.at(-1)! - axis[0]!)
  const longest = Math.max(...spans)
  const steps = Math.round(longest / gap)
  if (steps > maxSteps || !onLattice(longest / gap)) return undefined
  return longest / steps
}

function onLattice(k: number): boolean {
  return Math.abs(k - Math.round(k)) <= ON_LATTICE
}
