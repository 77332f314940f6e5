/** Concave polygons up to this many corners are ear-clipped (CAD n-gons are far smaller). */
export const MAX_EAR_CLIPPING_CORNERS = 256

/**
 * Triangulates one polygon, returning corner numbers (0..n-1), three per triangle. Convex polygons
 * (what exporters write almost always) get a fan from corner 0; concave ones are ear-clipped in
 * the polygon's own plane (Newell normal, dominant axis dropped) when they have at most
 * MAX_EAR_CLIPPING_CORNERS corners. Degenerate input falls back to
 * the fan, so a polygon of n corners always yields n - 2 triangles.
 */
export function triangulatePolygon(n: number, coordinate: (corner: number, axis: number) => number): number[] {
  if (n <= 3) return n === 3 ? [0, 1, 2] : []
  const plane = projectOntoPlane(n, coordinate)
  // Ear clipping is cubic in the worst case: a hostile file's million-corner face gets the fan.
  if (!plane || isConvex(plane, n) || n > MAX_EAR_CLIPPING_CORNERS) return fanTriangles(n)
  const out = clipEars(plane, n)
  // Self-intersecting or otherwise hopeless polygons: keep the triangle count with a fan.
  return out.length === (n - 2) * 3 ? out : fanTriangles(n)
}

/** The fan from corner 0: (0, k, k + 1) for every k. */
function fanTriangles(n: number): number[] {
  const out: number[] = []
  for (let k = 1; k + 1 < n; k++) out.push(0, k, k + 1)
  return out
}

/**
 * The corners in the polygon's own plane, x and y interleaved, wound counter-clockwise; undefined
 * when the polygon has no area to find a plane by (its Newell normal is zero).
 */
function projectOntoPlane(n: number, coordinate: (corner: number, axis: number) => number): Float64Array | undefined {
  // Newell's normal of the polygon, to pick the plane to work in.
  let nx = 0,
    ny = 0,
    nz = 0
  for (let i = 0; i < n; i++) {
    const j = (i + 1) % n
    const xi = coordinate(i, 0),
      yi = coordinate(i, 1),
      zi = coordinate(i, 2)
    const xj = coordinate(j, 0),
      yj = coordinate(j, 1),
      zj = coordinate(j, 2)
    nx += (yi - yj) * (zi + zj)
    ny += (zi - zj) * (xi + xj)
    nz += (xi - xj) * (yi + yj)
  }
  const ax = Math.abs(nx),
    ay = Math.abs(ny),
    az = Math.abs(nz)
  if (ax + ay + az === 0) return undefined
  // Project: drop the dominant axis; keep orientation so that the polygon winds counter-clockwise.
  const [u, v, flip] = az >= ax && az >= ay ? [0, 1, nz < 0] : ax >= ay ? [1, 2, nx < 0] : [2, 0, ny < 0]
  const plane = new Float64Array(n * 2)
  for (let i = 0; i < n; i++) {
    plane[i * 2] = coordinate(i, u)
    plane[i * 2 + 1] = flip ? -coordinate(i, v) : coordinate(i, v)
  }
  return plane
}

/** Twice the signed area of the projected triangle (a, b, c): positive when it turns left. */
function cross(plane: Float64Array, a: number, b: number, c: number): number {
  const ax = plane[a * 2]!
  const ay = plane[a * 2 + 1]!
  return (plane[b * 2]! - ax) * (plane[c * 2 + 1]! - ay) - (plane[b * 2 + 1]! - ay) * (plane[c * 2]! - ax)
}

function isConvex(plane: Float64Array, n: number): boolean {
  for (let i = 0; i < n; i++) if (cross(plane, i, (i + 1) % n, (i + 2) % n) < 0) return false
  return true
}

/** Ear clipping: cuts off convex corners with no other corner inside, until a triangle is left or none can be cut. */
function clipEars(plane: Float64Array, n: number): number[] {
  const remaining = Array.from({ length: n }, (_, i) => i)
  const out: number[] = []
  let guard = n * n
  while (remaining.length > 3 && guard-- > 0) {
    let clipped = false
    for (let i = 0; i < remaining.length; i++) {
      const a = remaining[(i + remaining.length - 1) % remaining.length]!
      const b = remaining[i]!
      const c = remaining[(i + 1) % remaining.length]!
      if (cross(plane, a, b, c) <= 0) continue // reflex or flat corner: not an ear
      if (anyCornerInside(plane, remaining, a, b, c)) continue
      out.push(a, b, c)
      remaining.splice(i, 1)
      clipped = true
      break
    }
    if (!clipped) break
  }
  if (remaining.length === 3) out.push(remaining[0]!, remaining[1]!, remaining[2]!)
  return out
}

/** Whether a corner other than a, b, c lies inside or on the triangle (a, b, c). */
function anyCornerInside(plane: Float64Array, remaining: number[], a: number, b: number, c: number): boolean {
  for (const p of remaining) {
    if (p === a || p === b || p === c) continue
    if (cross(plane, a, b, p) >= 0 && cross(plane, b, c, p) >= 0 && cross(plane, c, a, p) >= 0) return true
  }
  return false
}
