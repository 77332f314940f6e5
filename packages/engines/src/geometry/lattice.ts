import type { Mesh } from '@gltf-transform/core'

/**
 * Lattices that coordinates lie on: value = origin + k · step, k an integer. Voxel models
 * (chr_knight: 19 × 16 × 9 positions one unit apart, its UVs the centres of a 256-texel palette),
 * boxes, height fields sampled on a grid and files quantized before (gltfpack's own output,
 * dequantized) are drawn on one. Quantized on its lattice instead of on a grid across the bounds,
 * such a model keeps every coordinate exactly, and its integers step by 1 where the grid's step by
 * hundreds: meshopt's codec codes those deltas in fewer bits (chr_knight's positions: 8 402 B coded
 * on the 14-bit grid, 2 356 on their lattice).
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

/** How many leading values of each axis are searched for the smallest gap (all are checked after). */
const SAMPLE = 65_536

/** How finely the smallest gap is divided at most in the search for a common step. */
const MAX_PARTS = 64

/**
 * The lattice of the meshes' positions, one step for every axis (a node's uniform scale maps it
 * back), with at most `maxSteps` steps across the longest axis (a lattice finer than the grid the
 * caller would otherwise use is no gain), or undefined. Morphed meshes have none: their deltas
 * would have to lie on it too, and rarely do.
 */
export function findPositionLattice(meshes: readonly Mesh[], maxSteps: number): PositionLattice | undefined {
  const arrays: Float32Array[] = []
  for (const mesh of meshes) {
    for (const prim of mesh.listPrimitives()) {
      if (prim.listTargets().some((target) => target.getAttribute('POSITION'))) return undefined
      const position = prim.getAttribute('POSITION')
      const array = position?.getArray()
      if (!position || !(array instanceof Float32Array) || position.getType() !== 'VEC3') return undefined
      arrays.push(array)
    }
  }
  const lattice = commonLattice(arrays, 3, [0, 1, 2], maxSteps)
  return lattice && { step: lattice.step, origin: lattice.origins as [number, number, number] }
}

/**
 * Each axis's own lattice step over interleaved `size`-component arrays (undefined for an axis off
 * any lattice of at most `maxSteps` steps, or holding one value). For texture coordinates, whose
 * transform scales each axis apart.
 */
export function findAxisSteps(arrays: readonly Float32Array[], size: number, maxSteps: number): (number | undefined)[] {
  return Array.from({ length: size }, (_, k) => commonLattice(arrays, size, [k], maxSteps)?.step)
}

/**
 * The one step the `axes` all lie on, each from its smallest value (its origin): the smallest gap
 * between neighbouring values (in each axis's first SAMPLE values) or a whole fraction of it
 * (values 9 and 191 texels apart lie on a step of 1), refined over the longest span (the span
 * divided by the whole number of steps it holds: float32 rounding in a gap, 1e-4 of 1/708, adds up
 * to 0.07 over 708 steps), then checked on every value. Undefined if no such step of at most
 * `maxSteps` across holds them, with no gap (one value per axis) or a value not finite. A step
 * found by chance on a few values is no loss: every value is within ON_LATTICE of a step no finer
 * than the caller's grid, closer than that grid would put it.
 */
function commonLattice(
  arrays: readonly Float32Array[],
  size: number,
  axes: readonly number[],
  maxSteps: number,
): { step: number; origins: number[] } | undefined {
  const gap = smallestGap(arrays, size, axes, maxSteps + 1)
  const ranges = gap ? axes.map((k) => axisRange(arrays, size, k)) : []
  if (!gap || ranges.some((range) => !range)) return undefined
  const origins = ranges.map((range) => range![0])
  const longest = Math.max(...ranges.map((range) => range![1] - range![0]))
  for (let parts = 1; parts <= MAX_PARTS; parts++) {
    const steps = Math.round((longest / gap) * parts)
    if (steps > maxSteps) return undefined
    if (allOnLattice(arrays, size, axes, origins, longest / steps)) return { step: longest / steps, origins }
  }
  return undefined
}

/** Smallest and largest value of component `k`, or undefined if one is not finite. */
function axisRange(arrays: readonly Float32Array[], size: number, k: number): [number, number] | undefined {
  let min = Infinity
  let max = -Infinity
  for (const array of arrays) {
    for (let i = k; i < array.length; i += size) {
      const v = array[i]!
      if (!Number.isFinite(v)) return undefined
      if (v < min) min = v
      if (v > max) max = v
    }
  }
  return [min, max]
}

/**
 * The smallest gap between two distinct neighbouring values of any of the axes, over each axis's
 * first SAMPLE values; undefined when there is none, or an axis has more than `maxCount` distinct
 * values there (no coarse lattice holds it).
 */
function smallestGap(arrays: readonly Float32Array[], size: number, axes: readonly number[], maxCount: number): number | undefined {
  let gap = Infinity
  for (const k of axes) {
    const seen = new Set<number>()
    let left = SAMPLE
    for (const array of arrays) {
      for (let i = k; i < array.length && left > 0; i += size, left--) {
        seen.add(array[i]!)
        if (seen.size > maxCount) return undefined
      }
    }
    const sorted = Float64Array.from(seen).sort()
    for (let i = 1; i < sorted.length; i++) gap = Math.min(gap, sorted[i]! - sorted[i - 1]!)
  }
  return Number.isFinite(gap) ? gap : undefined
}

function allOnLattice(
  arrays: readonly Float32Array[],
  size: number,
  axes: readonly number[],
  origins: readonly number[],
  step: number,
): boolean {
  for (const [n, k] of axes.entries()) {
    const origin = origins[n]!
    for (const array of arrays) {
      for (let i = k; i < array.length; i += size) {
        const steps = (array[i]! - origin) / step
        if (Math.abs(steps - Math.round(steps)) > ON_LATTICE) return false
      }
    }
  }
  return true
}
