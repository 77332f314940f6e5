/** Grids larger than this many cells get coarser cells. */
const MAX_CELLS = 1 << 22
/** Triangle-in-cell entries at most; past it the cells grow (a few huge triangles over a fine grid). */
const MAX_ENTRIES = 1 << 24

/**
 * A uniform grid over a surface's triangles (xyz × 3 per triangle), each triangle listed in every
 * cell its bounding box overlaps, searched in growing shells for the distance from a point to the
 * nearest point of the surface: exact, where the distance to the nearest of a set of sampled
 * points is off by up to the sampling gap (texcoord_crash's ten large triangles: 5e-3 of the
 * diagonal between two files holding the same triangles).
 */
export class TriangleGrid {
  private readonly triangles: Float64Array
  private readonly min: number[]
  private readonly cell: number
  private readonly dims: number[]
  private readonly start: Uint32Array
  private readonly entries: Uint32Array
  /** Per triangle, the last query that tested it (a triangle sits in several cells). */
  private readonly seen: Uint32Array
  private query = 0

  constructor(triangles: Float64Array, area: number) {
    this.triangles = triangles
    const count = triangles.length / 9
    const box = bounds(triangles)
    this.min = box.min
    const size = box.max.map((high, k) => high - box.min[k]!)
    let cell = 2 * Math.sqrt(area / Math.max(count, 1)) || Math.max(...size) || 1
    for (;;) {
      const dims = size.map((s) => Math.floor(s / cell) + 1)
      if (dims[0]! * dims[1]! * dims[2]! <= MAX_CELLS && entryCount(triangles, this.min, cell, dims) <= MAX_ENTRIES) break
      cell *= 1.5
    }
    this.cell = cell
    this.dims = size.map((s) => Math.floor(s / cell) + 1)
    const cells = this.dims[0]! * this.dims[1]! * this.dims[2]!
    const counts = new Uint32Array(cells + 1)
    this.forEachCell((cellIndex) => counts[cellIndex + 1]!++)
    for (let c = 0; c < cells; c++) counts[c + 1]! += counts[c]!
    this.start = counts.slice()
    this.entries = new Uint32Array(counts[cells]!)
    this.forEachCell((cellIndex, t) => {
      this.entries[counts[cellIndex]!++] = t
    })
    this.seen = new Uint32Array(count)
  }

  /**
   * Distance from (x, y, z) to the surface; stops early once it is known to be at most `enough`
   * (the caller only needs the maximum over all its points).
   */
  distance(x: number, y: number, z: number, enough: number): number {
    const query = ++this.query
    const c = [this.axis(x, 0), this.axis(y, 1), this.axis(z, 2)]
    let best = Infinity
    const reach = Math.max(...this.dims)
    for (let r = 0; r <= reach; r++) {
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
              const t = this.entries[j]!
              if (this.seen[t] === query) continue
              this.seen[t] = query
              best = Math.min(best, pointTriangleDistance(x, y, z, this.triangles, t * 9))
              // Near enough is all the caller asks: the farthest point is elsewhere.
              if (best <= enough) return best
            }
          }
        }
      }
      // Every cell beyond shell r is at least r·cell away from the point's own cell.
      if (best <= r * this.cell) return best
    }
    return best
  }

  private axis(v: number, k: number): number {
    return cellOnAxis(v, this.min[k]!, this.cell, this.dims[k]!)
  }

  /** The cells each triangle's bounding box overlaps, given to `visit` with the triangle's number. */
  private forEachCell(visit: (cell: number, triangle: number) => void): void {
    const [dx, dy] = this.dims as [number, number, number]
    for (let i = 0; i < this.triangles.length / 9; i++) {
      const [x0, y0, z0, x1, y1, z1] = cellBox(this.triangles, i * 9, this.min, this.cell, this.dims)
      for (let z = z0; z <= z1; z++) for (let y = y0; y <= y1; y++) for (let x = x0; x <= x1; x++) visit((z * dy + y) * dx + x, i)
    }
  }
}

/** Cells the triangles would be listed in on a grid of `cell`-sized cells from `min`, `dims` of them per axis. */
function entryCount(triangles: Float64Array, min: number[], cell: number, dims: number[]): number {
  let n = 0
  for (let o = 0; o < triangles.length; o += 9) {
    const [x0, y0, z0, x1, y1, z1] = cellBox(triangles, o, min, cell, dims)
    n += (x1 - x0 + 1) * (y1 - y0 + 1) * (z1 - z0 + 1)
  }
  return n
}

/** The first and last cell, per axis, of the triangle at t[o..o+8]'s bounding box: [x0, y0, z0, x1, y1, z1]. */
function cellBox(
  t: Float64Array,
  o: number,
  min: number[],
  cell: number,
  dims: number[],
): [number, number, number, number, number, number] {
  const at = (k: number, pick: (...values: number[]) => number) =>
    cellOnAxis(pick(t[o + k]!, t[o + 3 + k]!, t[o + 6 + k]!), min[k]!, cell, dims[k]!)
  return [at(0, Math.min), at(1, Math.min), at(2, Math.min), at(0, Math.max), at(1, Math.max), at(2, Math.max)]
}

function cellOnAxis(v: number, min: number, cell: number, dim: number): number {
  return Math.min(dim - 1, Math.max(0, Math.floor((v - min) / cell)))
}

/** Per axis, the least and the greatest of xyz-interleaved values. */
export function bounds(values: Float64Array): { min: number[]; max: number[] } {
  const min = [Infinity, Infinity, Infinity]
  const max = [-Infinity, -Infinity, -Infinity]
  for (let i = 0; i < values.length; i++) {
    min[i % 3] = Math.min(min[i % 3]!, values[i]!)
    max[i % 3] = Math.max(max[i % 3]!, values[i]!)
  }
  return { min, max }
}

/** Distance from p to the triangle at t[o..o+8] (the closest point by its Voronoi region, Ericson 5.1.5). */
export function pointTriangleDistance(px: number, py: number, pz: number, t: Float64Array, o: number): number {
  const ax = t[o]!,
    ay = t[o + 1]!,
    az = t[o + 2]!
  const abx = t[o + 3]! - ax,
    aby = t[o + 4]! - ay,
    abz = t[o + 5]! - az
  const acx = t[o + 6]! - ax,
    acy = t[o + 7]! - ay,
    acz = t[o + 8]! - az
  const apx = px - ax,
    apy = py - ay,
    apz = pz - az
  const nx = aby * acz - abz * acy,
    ny = abz * acx - abx * acz,
    nz = abx * acy - aby * acx
  // A triangle of no area (two corners at one place, or three on a line) is its edges: the regions
  // below assume a triangle that has one.
  if (length2(nx, ny, nz) <= 1e-24 * length2(abx, aby, abz) * length2(acx, acy, acz)) {
    const bcx = acx - abx,
      bcy = acy - aby,
      bcz = acz - abz
    return Math.sqrt(
      Math.min(
        segment2(apx, apy, apz, abx, aby, abz),
        segment2(apx, apy, apz, acx, acy, acz),
        segment2(apx - abx, apy - aby, apz - abz, bcx, bcy, bcz),
      ),
    )
  }
  // p − b and p − c, projected on ab and ac.
  const d1 = abx * apx + aby * apy + abz * apz
  const d2 = acx * apx + acy * apy + acz * apz
  const d3 = d1 - (abx * abx + aby * aby + abz * abz)
  const d4 = d2 - (acx * abx + acy * aby + acz * abz)
  const d5 = d1 - (abx * acx + aby * acy + abz * acz)
  const d6 = d2 - (acx * acx + acy * acy + acz * acz)
  const vc = d1 * d4 - d3 * d2
  const vb = d5 * d2 - d1 * d6
  const va = d3 * d6 - d5 * d4
  // The closest point as a + u·ab + v·ac.
  let u = 0
  let v = 0
  if (d1 <= 0 && d2 <= 0) {
    // corner a
  } else if (d3 >= 0 && d4 <= d3) u = 1
  else if (vc <= 0 && d1 >= 0 && d3 <= 0) u = d1 - d3 > 0 ? d1 / (d1 - d3) : 0
  else if (d6 >= 0 && d5 <= d6) v = 1
  else if (vb <= 0 && d2 >= 0 && d6 <= 0) v = d2 - d6 > 0 ? d2 / (d2 - d6) : 0
  else if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0) {
    const span = d4 - d3 + (d5 - d6)
    v = span > 0 ? (d4 - d3) / span : 0
    u = 1 - v
  } else {
    u = vb / (va + vb + vc)
    v = vc / (va + vb + vc)
  }
  return Math.sqrt(length2(apx - u * abx - v * acx, apy - u * aby - v * acy, apz - u * abz - v * acz))
}

function length2(x: number, y: number, z: number): number {
  return x * x + y * y + z * z
}

/** Squared distance from p to the segment from the origin to d (p given from the segment's start). */
function segment2(px: number, py: number, pz: number, dx: number, dy: number, dz: number): number {
  const dd = length2(dx, dy, dz)
  const s = dd > 0 ? Math.min(1, Math.max(0, (px * dx + py * dy + pz * dz) / dd)) : 0
  return length2(px - s * dx, py - s * dy, pz - s * dz)
}
