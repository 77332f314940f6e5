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
  const fan = () => {
    const out: number[] = []
    for (let k = 1; k + 1 < n; k++) out.push(0, k, k + 1)
    return out
  }
  if (n <= 3) return n === 3 ? [0, 1, 2] : []
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
  if (ax + ay + az === 0) return fan()
  // Project: drop the dominant axis; keep orientation so that the polygon winds counter-clockwise.
  const [u, v, flip] = az >= ax && az >= ay ? [0, 1, nz < 0] : ax >= ay ? [1, 2, nx < 0] : [2, 0, ny < 0]
  const px = new Float64Array(n)
  const py = new Float64Array(n)
  for (let i = 0; i < n; i++) {
    px[i] = coordinate(i, u)
    py[i] = flip ? -coordinate(i, v) : coordinate(i, v)
  }
  const cross = (a: number, b: number, c: number) => (px[b]! - px[a]!) * (py[c]! - py[a]!) - (py[b]! - py[a]!) * (px[c]! - px[a]!)
  let convex = true
  for (let i = 0; i < n && convex; i++) if (cross(i, (i + 1) % n, (i + 2) % n) < 0) convex = false
  // Ear clipping is cubic in the worst case: a hostile file's million-corner face gets the fan.
  if (convex || n > MAX_EAR_CLIPPING_CORNERS) return fan()

  const remaining = Array.from({ length: n }, (_, i) => i)
  const out: number[] = []
  let guard = n * n
  while (remaining.length > 3 && guard-- > 0) {
    let clipped = false
    for (let i = 0; i < remaining.length; i++) {
      const a = remaining[(i + remaining.length - 1) % remaining.length]!
      const b = remaining[i]!
      const c = remaining[(i + 1) % remaining.length]!
      if (cross(a, b, c) <= 0) continue // reflex or flat corner: not an ear
      let inside = false
      for (const p of remaining) {
        if (p === a || p === b || p === c) continue
        if (cross(a, b, p) >= 0 && cross(b, c, p) >= 0 && cross(c, a, p) >= 0) {
          inside = true
          break
        }
      }
      if (inside) continue
      out.push(a, b, c)
      remaining.splice(i, 1)
      clipped = true
      break
    }
    if (!clipped) break
  }
  if (remaining.length === 3) out.push(remaining[0]!, remaining[1]!, remaining[2]!)
  // Self-intersecting or otherwise hopeless polygons: keep the triangle count with a fan.
  return out.length === (n - 2) * 3 ? out : fan()
}
