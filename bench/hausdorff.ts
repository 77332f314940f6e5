import type { Document, Node, Primitive } from '@gltf-transform/core'
import { multiply } from '../packages/engines/src/geometry/mat4.ts'
import { createRandom } from '../test/support/random.ts'
import { bounds, TriangleGrid } from './triangle-grid.ts'

/**
 * Symmetric Hausdorff distance between the surfaces two documents draw, relative to the first's
 * bounding-box diagonal: the larger of "farthest point of A from B" and "farthest point of B
 * from A", each measured from the surface's vertices plus area-weighted random points (seeded, so
 * a run is repeatable) to the other surface's nearest triangle (a uniform grid of triangles). The
 * distance to a triangle is exact; only where the farthest point lies is sampled, so this is an
 * estimate from below by at most the sampling gap (≈ √(area / samples)). Measured to the other
 * side's sampled points instead, as this did before, two files holding the same ten large
 * triangles (texcoord_crash, by Mos and by gltfpack) measured 5.1e-3 and 6.2e-3 apart.
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

/**
 * World-space triangles of every scene, as a flat xyz list (three points per triangle). A skinned
 * mesh is placed by its joints (each vertex by its weighted joint matrices × inverse bind matrices),
 * its node's own transform ignored, as glTF draws it: tools place the bind pose differently (one in
 * the node, one in the inverse bind matrices) and draw the same.
 */
function sceneTriangles(doc: Document): Float64Array {
  const out: number[] = []
  const p = [0, 0, 0]
  for (const scene of doc.getRoot().listScenes()) {
    scene.traverse((node) => {
      const mesh = node.getMesh()
      if (!mesh) return
      const nodeMatrix = node.getWorldMatrix()
      const joints = jointMatrices(node)
      for (const prim of mesh.listPrimitives()) {
        const position = prim.getAttribute('POSITION')
        if (!position || prim.getMode() !== 4) continue
        const skinning = joints && prim.getAttribute('JOINTS_0') && prim.getAttribute('WEIGHTS_0')
        const indices = prim.getIndices()?.getArray()
        const count = indices ? indices.length : position.getCount()
        for (let i = 0; i < count - (count % 3); i++) {
          const v = indices ? indices[i]! : i
          position.getElement(v, p)
          const m = skinning ? skinMatrix(prim, v, joints) : nodeMatrix
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

/** Each joint's world matrix times its inverse bind matrix, for a skinned node; undefined otherwise. */
function jointMatrices(node: Node): number[][] | undefined {
  const skin = node.getSkin()
  if (!skin) return undefined
  const inverseBind = skin.getInverseBindMatrices()
  return skin.listJoints().map((joint, j) => multiply(joint.getWorldMatrix(), inverseBind ? inverseBind.getElement(j, []) : IDENTITY))
}

/** The vertex's blended joint matrix: weights × joint matrices, summed. */
function skinMatrix(prim: Primitive, vertex: number, joints: number[][]): number[] {
  const indices = prim.getAttribute('JOINTS_0')!.getElement(vertex, [])
  const weights = prim.getAttribute('WEIGHTS_0')!.getElement(vertex, [])
  const m = new Array<number>(16).fill(0)
  weights.forEach((weight, k) => {
    const joint = joints[indices[k]!]
    if (weight && joint) for (let e = 0; e < 16; e++) m[e]! += weight * joint[e]!
  })
  return m
}

const IDENTITY = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]

interface Surface {
  /** Every triangle corner and the area-weighted samples: where distances are measured from. */
  points: Float64Array
  /** xyz × 3 per triangle: what distances are measured to. */
  triangles: Float64Array
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
  return { points, triangles: t, area: total }
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
  const { min, max } = bounds(points)
  return max.map((high, k) => high - min[k]!)
}

/** The largest distance from a point of `from` to the surface `to` (its nearest triangle). */
function farthest(from: Float64Array, to: Surface): number {
  const grid = new TriangleGrid(to.triangles, to.area)
  let worst = 0
  for (let i = 0; i < from.length; i += 3) worst = Math.max(worst, grid.distance(from[i]!, from[i + 1]!, from[i + 2]!, worst))
  return worst
}
