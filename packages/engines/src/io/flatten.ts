import type { Accessor, Document, Material, Node, Primitive } from '@gltf-transform/core'
import { uvSetWritten } from './texture-slots.ts'

/** One primitive placed in world space: what single-space formats (OBJ, STL, PLY) write. */
export interface FlatPrimitive {
  name: string
  /** 0 points, 1 lines, 4 triangles (strips, fans and loops are expanded). */
  mode: 0 | 1 | 4
  positions: Float32Array
  normals?: Float32Array
  /** The UV set the material's maps read (uvSetWritten), TEXCOORD_0 where the primitive lacks it. */
  uvs?: Float32Array
  /** RGBA, 0..1. */
  colors?: Float32Array
  /** Vertex indices: 3 per triangle, 2 per line, 1 per point. */
  indices: Uint32Array
  material: Material | null
}

/**
 * Flattens every scene's node graph: each mesh instance becomes one FlatPrimitive per primitive
 * with node world transforms applied (normals by the inverse transpose; winding flipped under
 * mirroring), strips/fans/loops expanded to lists. Skins and morph targets are taken at rest pose.
 */
export function flattenDocument(doc: Document): FlatPrimitive[] {
  const out: FlatPrimitive[] = []
  const scenes = doc.getRoot().listScenes()
  const visit = (node: Node) => {
    const mesh = node.getMesh()
    if (mesh) {
      const world = node.getWorldMatrix() as number[]
      mesh.listPrimitives().forEach((prim, i) => {
        const flat = flattenPrimitive(
          prim,
          world,
          `${node.getName() || mesh.getName() || 'mesh'}${mesh.listPrimitives().length > 1 ? `_${i}` : ''}`,
        )
        if (flat) out.push(flat)
      })
    }
  }
  for (const scene of scenes) scene.traverse(visit)
  return out
}

/** Reads an accessor as floats (denormalized), fast when it already is a plain float array. */
function readFloats(accessor: Accessor): Float32Array {
  const array = accessor.getArray()
  if (array instanceof Float32Array && !accessor.getNormalized()) return array
  const size = accessor.getElementSize()
  const count = accessor.getCount()
  const out = new Float32Array(count * size)
  const element: number[] = []
  for (let i = 0; i < count; i++) {
    accessor.getElement(i, element)
    for (let k = 0; k < size; k++) out[i * size + k] = element[k]!
  }
  return out
}

/** The primitive in world space: positions and normals transformed, topology expanded to lists. */
function flattenPrimitive(prim: Primitive, m: number[], name: string): FlatPrimitive | null {
  const position = prim.getAttribute('POSITION')
  if (!position || position.getCount() === 0) return null
  const count = position.getCount()
  // Attributes whose count differs from the positions' cannot be written per vertex: left out.
  const sameCount = (semantic: string) => {
    const accessor = prim.getAttribute(semantic)
    return accessor && accessor.getCount() === count ? accessor : null
  }
  const normalAccessor = sameCount('NORMAL')
  const uvAccessor = sameCount(`TEXCOORD_${uvSetWritten(prim.getMaterial())}`) ?? sameCount('TEXCOORD_0')
  const colorAccessor = sameCount('COLOR_0')
  const normals = normalAccessor ? transformNormals(readFloats(normalAccessor), normalMatrix(m)) : undefined
  const uvs = uvAccessor ? readFloats(uvAccessor).slice() : undefined
  const colors = colorAccessor ? toRgba(readFloats(colorAccessor), colorAccessor.getElementSize()) : undefined

  const raw = prim.getIndices()?.getArray()
  const { mode, indices } = expandTopology(prim.getMode(), raw ? (i: number) => raw[i]! : (i: number) => i, raw ? raw.length : count)
  if (mode === 4 && determinant3(m) < 0) flipWinding(indices)
  return {
    name,
    mode,
    positions: transformPositions(readFloats(position), m),
    // Out-of-range indices would make writers emit references to vertices that do not exist.
    indices: indices.some((i) => i >= count) ? filterInRange(indices, mode, count) : indices,
    material: prim.getMaterial(),
    ...(normals ? { normals } : {}),
    ...(uvs ? { uvs } : {}),
    ...(colors ? { colors } : {}),
  }
}

function transformPositions(src: Float32Array, m: number[]): Float32Array {
  const positions = new Float32Array(src.length - (src.length % 3))
  for (let i = 0; i < positions.length; i += 3) {
    const x = src[i]!,
      y = src[i + 1]!,
      z = src[i + 2]!
    positions[i] = m[0]! * x + m[4]! * y + m[8]! * z + m[12]!
    positions[i + 1] = m[1]! * x + m[5]! * y + m[9]! * z + m[13]!
    positions[i + 2] = m[2]! * x + m[6]! * y + m[10]! * z + m[14]!
  }
  return positions
}

/** Normals through the inverse transpose `nm`, renormalised (a scaled node would stretch them). */
function transformNormals(n: Float32Array, nm: number[]): Float32Array {
  const normals = new Float32Array(n.length - (n.length % 3))
  for (let i = 0; i < normals.length; i += 3) {
    const x = n[i]!,
      y = n[i + 1]!,
      z = n[i + 2]!
    const a = nm[0]! * x + nm[3]! * y + nm[6]! * z
    const b = nm[1]! * x + nm[4]! * y + nm[7]! * z
    const c = nm[2]! * x + nm[5]! * y + nm[8]! * z
    const len = Math.hypot(a, b, c) || 1
    normals[i] = a / len
    normals[i + 1] = b / len
    normals[i + 2] = c / len
  }
  return normals
}

/** RGB or RGBA colours as RGBA (alpha 1 where the source has none). */
function toRgba(c: Float32Array, size: number): Float32Array {
  const count = Math.floor(c.length / size)
  const colors = new Float32Array(count * 4)
  for (let i = 0; i < count; i++) {
    colors[i * 4] = c[i * size]!
    colors[i * 4 + 1] = c[i * size + 1]!
    colors[i * 4 + 2] = c[i * size + 2]!
    colors[i * 4 + 3] = size === 4 ? c[i * size + 3]! : 1
  }
  return colors
}

/** glTF's seven primitive modes as points, line lists or triangle lists, over `n` indices read by `index`. */
function expandTopology(gltfMode: number, index: (i: number) => number, n: number): { mode: 0 | 1 | 4; indices: Uint32Array } {
  const list = (size: number) => {
    const indices = new Uint32Array(n - (n % size))
    for (let i = 0; i < indices.length; i++) indices[i] = index(i)
    return indices
  }
  switch (gltfMode) {
    case 0:
      return { mode: 0, indices: list(1) }
    case 1:
      return { mode: 1, indices: list(2) }
    case 2: // LINE_LOOP
    case 3: {
      // LINE_STRIP
      const segments = n < 2 ? 0 : gltfMode === 2 ? n : n - 1
      const indices = new Uint32Array(segments * 2)
      for (let s = 0; s < segments; s++) {
        indices[s * 2] = index(s)
        indices[s * 2 + 1] = index((s + 1) % n)
      }
      return { mode: 1, indices }
    }
    case 5: {
      // TRIANGLE_STRIP: odd triangles swap two corners to keep the winding.
      const tris = Math.max(0, n - 2)
      const indices = new Uint32Array(tris * 3)
      for (let t = 0; t < tris; t++) {
        const even = t % 2 === 0
        indices[t * 3] = index(t)
        indices[t * 3 + 1] = index(even ? t + 1 : t + 2)
        indices[t * 3 + 2] = index(even ? t + 2 : t + 1)
      }
      return { mode: 4, indices }
    }
    case 6: {
      // TRIANGLE_FAN
      const tris = Math.max(0, n - 2)
      const indices = new Uint32Array(tris * 3)
      for (let t = 0; t < tris; t++) {
        indices[t * 3] = index(0)
        indices[t * 3 + 1] = index(t + 1)
        indices[t * 3 + 2] = index(t + 2)
      }
      return { mode: 4, indices }
    }
    default:
      return { mode: 4, indices: list(3) }
  }
}

/** Under a mirroring transform triangles turn inside out: swapping two corners turns them back. */
function flipWinding(indices: Uint32Array): void {
  for (let t = 0; t + 2 < indices.length; t += 3) {
    const b = indices[t + 1]!
    indices[t + 1] = indices[t + 2]!
    indices[t + 2] = b
  }
}

function filterInRange(indices: Uint32Array, mode: 0 | 1 | 4, count: number): Uint32Array {
  const size = mode === 4 ? 3 : mode === 1 ? 2 : 1
  const kept: number[] = []
  for (let i = 0; i < indices.length; i += size) {
    let ok = true
    for (let k = 0; k < size; k++) if (indices[i + k]! >= count) ok = false
    if (ok) for (let k = 0; k < size; k++) kept.push(indices[i + k]!)
  }
  return Uint32Array.from(kept)
}

function determinant3(m: number[]): number {
  return m[0]! * (m[5]! * m[10]! - m[6]! * m[9]!) - m[4]! * (m[1]! * m[10]! - m[2]! * m[9]!) + m[8]! * (m[1]! * m[6]! - m[2]! * m[5]!)
}

/** Inverse transpose of the upper 3×3 (column-major), for transforming normals. */
function normalMatrix(m: number[]): number[] {
  const a00 = m[0]!,
    a01 = m[1]!,
    a02 = m[2]!
  const a10 = m[4]!,
    a11 = m[5]!,
    a12 = m[6]!
  const a20 = m[8]!,
    a21 = m[9]!,
    a22 = m[10]!
  const b01 = a22 * a11 - a12 * a21
  const b11 = -a22 * a10 + a12 * a20
  const b21 = a21 * a10 - a11 * a20
  const det = a00 * b01 + a01 * b11 + a02 * b21 || 1
  const inv = [
    b01 / det,
    (-a22 * a01 + a02 * a21) / det,
    (a12 * a01 - a02 * a11) / det,
    b11 / det,
    (a22 * a00 - a02 * a20) / det,
    (-a12 * a00 + a02 * a10) / det,
    b21 / det,
    (-a21 * a00 + a01 * a20) / det,
    (a11 * a00 - a01 * a10) / det,
  ]
  // transpose
  return [inv[0]!, inv[3]!, inv[6]!, inv[1]!, inv[4]!, inv[7]!, inv[2]!, inv[5]!, inv[8]!]
}
