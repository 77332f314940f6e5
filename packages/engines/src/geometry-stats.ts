import type { Document, Primitive } from '@gltf-transform/core'
import { getBounds } from '@gltf-transform/core'

/** Triangles drawn by one primitive (triangles, strips and fans); 0 for points and lines. */
export function primitiveTriangles(prim: Primitive): number {
  const count = prim.getIndices()?.getCount() ?? prim.getAttribute('POSITION')?.getCount() ?? 0
  switch (prim.getMode()) {
    case 4: // TRIANGLES
      return Math.floor(count / 3)
    case 5: // TRIANGLE_STRIP
    case 6: // TRIANGLE_FAN
      return Math.max(0, count - 2)
    default:
      return 0
  }
}

/**
 * Triangles whose three corners are at distinct positions. Encoders may drop the others (Draco's
 * edgebreaker does), which changes nothing on screen.
 */
export function primitiveVisibleTriangles(prim: Primitive): number {
  const position = prim.getAttribute('POSITION')
  if (!position || prim.getMode() !== 4) return primitiveTriangles(prim)
  const indices = prim.getIndices()?.getArray()
  const count = indices ? indices.length : position.getCount()
  const a: number[] = []
  const b: number[] = []
  const c: number[] = []
  const same = (p: number[], q: number[]) => p[0] === q[0] && p[1] === q[1] && p[2] === q[2]
  let visible = 0
  for (let i = 0; i + 2 < count; i += 3) {
    position.getElement(indices ? indices[i]! : i, a)
    position.getElement(indices ? indices[i + 1]! : i + 1, b)
    position.getElement(indices ? indices[i + 2]! : i + 2, c)
    if (!same(a, b) && !same(b, c) && !same(a, c)) visible++
  }
  return visible
}

/**
 * Triangles the scene draws: every mesh counted once per node that instances it, as a viewer
 * (or `assimp info` after flattening) would count them.
 */
export function countSceneTriangles(doc: Document, options: { visibleOnly?: boolean } = {}): number {
  const count = options.visibleOnly ? primitiveVisibleTriangles : primitiveTriangles
  let total = 0
  for (const scene of doc.getRoot().listScenes()) {
    scene.traverse((node) => {
      for (const prim of node.getMesh()?.listPrimitives() ?? []) total += count(prim)
    })
  }
  return total
}

/** Triangles of every mesh in the file, each counted once however often it is instanced. */
export function countMeshTriangles(doc: Document): number {
  let total = 0
  for (const mesh of doc.getRoot().listMeshes()) for (const prim of mesh.listPrimitives()) total += primitiveTriangles(prim)
  return total
}

/** World-space bounds of every scene in the document. */
export function documentBounds(doc: Document): { min: number[]; max: number[] } {
  const min = [Infinity, Infinity, Infinity]
  const max = [-Infinity, -Infinity, -Infinity]
  for (const scene of doc.getRoot().listScenes()) {
    const b = getBounds(scene)
    for (let i = 0; i < 3; i++) {
      min[i] = Math.min(min[i]!, b.min[i]!)
      max[i] = Math.max(max[i]!, b.max[i]!)
    }
  }
  return { min, max }
}
