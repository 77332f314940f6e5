import type { Document } from '@gltf-transform/core'
import { createRandom } from '../test/support/random.ts'

/**
 * Symmetric Hausdorff distance between the surfaces two documents draw, relative to the first's
 * bounding-box diagonal: the larger of "farthest point of A from B" and "farthest point of B
 * from A", each surface represented by its vertices plus area-weighted random points (seeded, so a
 * run is repeatable), nearest neighbours found in a uniform grid. Sampling both sides makes this
 * an estimate from above by at most the sampling gap (≈ √(area / samples)), the same for every
 * tool compared on one file, which is what the bench needs: which simplifier strayed farther.
 */
export function hausdorff(a: Document, b: Document, samples = 100_000): number {
  const sa = surfacePoints(a, samples)
  const sb = surfacePoints(b, samples)
  if (sa.points.length === 0 || sb.points.length === 0) return NaN
  // A position that is not finite (BoxWithInfinites) has no distance to measure; the grid would never end its search.
  if (!sa.points.every(Number.isFinite) || !sb.points.every(Number.isFinite)) return NaN
  const diagonal = Math.hypot(...extent(sa.points))
  if (!(diagonal > 0)) return NaN
  return Math.max(farthest(sa.points, sb), farthest(sb.points, sa)) / diagonal
}

/** World-space triangles of every scene, as a flat xyz list (three points per triangle). */
function sceneTriangles(doc: Document): Float64Array {
  const out: number[] = []
  const p = [0, 0, 0]
  for (const scene of doc.getRoot().listScenes()) {
    scene.traverse((node) => {
      const mesh = node.getMesh()
      if (!mesh) return
      const m = node.getWorldMatrix()
      for (const prim of mesh.listPrimitives()) {
        const position = prim.getAttribute('POSITION')
        if (!position || prim.getMode() !== 4) continue
        const indices = prim.getIndices()?.getArray()
        const count = indices ? indices.length : position.getCount()
        for (let i = 0; i < count - (count % 3); i++) {
          position.getElement(indices ? indices[i]! : i, p)
          out.push(
            m[0]! * p[0]! + m[4]! * p[1]! + m[8]! * p[2]! + m[12]!,
            m[1]! * p[0]! + m[5]! * p[1]! + m[9]! * p[2]! + m[13]!,
            m[2]! * p[0]! + m[6]! * p[1]! + m[10]! * p[2]! + m[14]!,
          )
        }
      }
    })
  }
  return Float64Array.from(out)
}

interface Surface {
  points: Float64Array
  area: number
}

/** Every triangle corner plus `samples` points spread over the surface by area. */
function surfacePoints(doc: Document, samples: number): Surface {
  const t = sceneTriangles(doc)
  const triangles = t.length / 9
  const cumulative = new Float64Array(triangles)
  let total = 0
  for (let i = 0; i < triangles; i++) {
    const o = i * 9
    const [ux, uy, uz] = [t[o + 3]! - t[o]!, t[o + 4]! - t[o + 1]!, t[o + 5]! - t[o + 2]!]
    const [vx, vy, vz] = [t[o + 6]! - t[o]!, t[o + 7]! - t[o + 1]!, t[o + 8]! - t[o + 2]!]
    total += Math.hypot(uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx) / 2
    cumulative[i] = total
  }
  const random = createRandom(7)
  const extra = total > 0 ? samples : 0
  const points = new Float64Array(t.length + extra * 3)
  points.set(t)
  for (let s = 0, w = t.length; s < extra; s++, w += 3) {
    const i = lowerBound(cumulative, random() * total)
    let r1 = random()
    let r2 = random()
    if (r1 + r2 > 1) [r1, r2] = [1 - r1, 1 - r2]
    const o = i * 9
    for (let k = 0; k < 3; k++) points[w + k] = t[o + k]! + r1 * (t[o + 3 + k]! - t[o + k]!) + r2 * (t[o + 6 + k]! - t[o + k]!)
  }
  return { points, area: total }
}

function lowerBound(sorted: Float64Array, value: number): number {
  let lo = 0
  let hi = sorted.length - 1
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (sorted[mid]! < value) lo = mid + 1
    else hi = mid
  }
  return lo
}

function extent(points: Float64Array): number[] {
  const min = [Infinity, Infinity, Infinity]
  const max = [-Infinity, -Infinity, -Infinity]
  for (let i = 0; i < points.length; i++) {
    min[i % 3] = Math.min(min[i % 3]!, points[i]!)
    max[i % 3] = Math.max(max[i % 3]!, points[i]!)
  }
  return [0, 1, 2].map((k) => max[k]! - min[k]!)
}

/** The largest distance from a point of `from` to its nearest point of `to`. */
function farthest(from: Float64Array, to: Surface): number {
  const grid = new PointGrid(to)
  let worst = 0
  for (let i = 0; i < from.length; i += 3) worst = Math.max(worst, grid.nearest(from[i]!, from[i + 1]!, from[i + 2]!, worst))
  return worst
}

const MAX_CELLS = 1 << 22

/**
 * A uniform grid over a surface's points, searched in growing shells. Cells are sized by the
 * surface's area, not the bounding volume (points lie on a surface: cells sized by volume would
 * each hold hundreds), about four points per cell, and grown where the grid would be too large.
 */
class PointGrid {
  private readonly points: Float64Array
  private readonly min: number[]
  private readonly cell: number
  private readonly dims: number[]
  private readonly start: Uint32Array
  private readonly order: Uint32Array

  constructor({ points, area }: Surface) {
    this.points = points
    const count = points.length / 3
    const size = extent(points)
    this.min = [0, 1, 2].map((k) => {
      let m = Infinity
      for (let i = k; i < points.length; i += 3) m = Math.min(m, points[i]!)
      return m
    })
    let cell = 2 * Math.sqrt(area / count) || Math.max(...size) || 1
    while (size.reduce((n, s) => n * (Math.floor(s / cell) + 1), 1) > MAX_CELLS) cell *= 1.5
    this.cell = cell
    this.dims = size.map((s) => Math.floor(s / cell) + 1)
    const cells = this.dims[0]! * this.dims[1]! * this.dims[2]!
    const counts = new Uint32Array(cells + 1)
    const index = new Uint32Array(count)
    for (let i = 0; i < count; i++) counts[(index[i] = this.cellOf(points[i * 3]!, points[i * 3 + 1]!, points[i * 3 + 2]!)) + 1]!++
    for (let c = 0; c < cells; c++) counts[c + 1]! += counts[c]!
    this.start = counts.slice()
    this.order = new Uint32Array(count)
    for (let i = 0; i < count; i++) this.order[counts[index[i]!]!++] = i
  }

  private axis(v: number, k: number): number {
    return Math.min(this.dims[k]! - 1, Math.max(0, Math.floor((v - this.min[k]!) / this.cell)))
  }

  private cellOf(x: number, y: number, z: number): number {
    return (this.axis(z, 2) * this.dims[1]! + this.axis(y, 1)) * this.dims[0]! + this.axis(x, 0)
  }

  /**
   * Distance to the nearest point; stops early once it is known to be at most `enough` (the
   * caller only needs the maximum over all queries).
   */
  nearest(x: number, y: number, z: number, enough: number): number {
    const c = [this.axis(x, 0), this.axis(y, 1), this.axis(z, 2)]
    let best = Infinity
    for (let r = 0; ; r++) {
      for (let dz = -r; dz <= r; dz++) {
        const cz = c[2]! + dz
        if (cz < 0 || cz >= this.dims[2]!) continue
        for (let dy = -r; dy <= r; dy++) {
          const cy = c[1]! + dy
          if (cy < 0 || cy >= this.dims[1]!) continue
          const shell = Math.abs(dz) === r || Math.abs(dy) === r
          for (let dx = -r; dx <= r; dx += shell ? 1 : 2 * r || 1) {
            const cx = c[0]! + dx
            if (cx < 0 || cx >= this.dims[0]!) continue
            const cell = (cz * this.dims[1]! + cy) * this.dims[0]! + cx
            for (let j = this.start[cell]!; j < this.start[cell + 1]!; j++) {
              const o = this.order[j]! * 3
              best = Math.min(best, Math.hypot(this.points[o]! - x, this.points[o + 1]! - y, this.points[o + 2]! - z))
            }
          }
        }
      }
      // Every point beyond shell r is at least r·cell away.
      if (best <= r * this.cell || best <= enough) return best
      if (r > Math.max(...this.dims)) return best
    }
  }
}
