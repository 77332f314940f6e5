import { Document } from '@gltf-transform/core'
import { ModelInputError } from '../errors.ts'
import { flattenDocument } from './flatten.ts'
import { checkAllocation, type ReadOptions } from './limits.ts'
import { buildDocument, GrowableArray, type MeshData } from './mesh-builder.ts'

const HEADER = 80
const RECORD = 50

/**
 * Reads STL, ASCII or binary. A file is binary when its size is exactly what its triangle count
 * declares (even when the header starts with "solid", as many exporters write); otherwise ASCII when
 * it starts with "solid". Each ASCII solid becomes its own mesh. Triangles are unindexed with the
 * facet normal on each corner (recomputed when the file's is zero).
 */
export function readStl(bytes: Uint8Array, options: ReadOptions = {}): Document {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const declared = bytes.byteLength >= HEADER + 4 ? view.getUint32(HEADER, true) : -1
  const exactBinary = declared >= 0 && HEADER + 4 + declared * RECORD === bytes.byteLength
  if (!exactBinary && looksAscii(bytes)) return readAscii(bytes, options)
  if (declared < 0) throw new ModelInputError('not an STL file: too short for a binary header and not ASCII STL')
  checkAllocation(declared * 9 * 4 * 2, `binary STL declaring ${declared} triangles`, options)
  if (HEADER + 4 + declared * RECORD > bytes.byteLength) {
    throw new ModelInputError(
      `truncated binary STL: header declares ${declared} triangles (${HEADER + 4 + declared * RECORD} bytes), file has ${bytes.byteLength} bytes`,
    )
  }
  if (declared === 0) throw new ModelInputError('STL file holds no triangles')
  const positions = new Float32Array(declared * 9)
  const normals = new Float32Array(declared * 9)
  for (let t = 0; t < declared; t++) {
    const at = HEADER + 4 + t * RECORD
    for (let k = 0; k < 9; k++) positions[t * 9 + k] = view.getFloat32(at + 12 + k * 4, true)
    setFacetNormal(normals, positions, t, view.getFloat32(at, true), view.getFloat32(at + 4, true), view.getFloat32(at + 8, true))
  }
  return buildDocument(new Document(), [{ name: stlName(bytes) || 'stl', primitives: [{ positions, normals, mode: 4 }] }])
}

function looksAscii(bytes: Uint8Array): boolean {
  const head = new TextDecoder('latin1')
    .decode(bytes.subarray(0, Math.min(bytes.byteLength, 512)))
    .trimStart()
    .toLowerCase()
  return head.startsWith('solid') && (head.includes('facet') || head.includes('endsolid') || bytes.byteLength < HEADER + 4)
}

function stlName(bytes: Uint8Array): string {
  const head = new TextDecoder('latin1').decode(bytes.subarray(0, HEADER))
  const match = /^solid\s+([\x20-\x7e]*)/.exec(head)
  return match ? match[1]!.trim() : ''
}

function readAscii(bytes: Uint8Array, options: ReadOptions): Document {
  const text = new TextDecoder('latin1').decode(bytes)
  // Every vertex line needs at least ~14 bytes, which bounds what the text can declare.
  checkAllocation((text.length / 14) * 3 * 4 * 2, 'ASCII STL', options)
  const solids: MeshData[] = []
  let name = ''
  let positions = new GrowableArray(Float32Array)
  let normals = new GrowableArray(Float32Array)
  let facet = [0, 0, 0]
  let corner = 0
  let sawSolid = false
  const finish = () => {
    if (positions.length > 0)
      solids.push({
        name: name || `solid_${solids.length + 1}`,
        primitives: [{ positions: positions.toArray(), normals: normals.toArray(), mode: 4 }],
      })
    positions = new GrowableArray(Float32Array)
    normals = new GrowableArray(Float32Array)
  }
  for (const raw of text.split(/\r?\n|\r/)) {
    const line = raw.trim()
    if (line === '') continue
    const tokens = line.split(/\s+/)
    const keyword = tokens[0]!.toLowerCase()
    if (keyword === 'solid') {
      finish()
      sawSolid = true
      name = tokens.slice(1).join(' ')
    } else if (keyword === 'facet') {
      facet = [Number(tokens[2]), Number(tokens[3]), Number(tokens[4])].map((v) => (Number.isFinite(v) ? v : 0))
      corner = 0
    } else if (keyword === 'vertex') {
      const x = Number(tokens[1]),
        y = Number(tokens[2]),
        z = Number(tokens[3])
      if (tokens.length < 4 || !Number.isFinite(x) || !Number.isFinite(y) || !Number.isFinite(z)) {
        throw new ModelInputError(`invalid ASCII STL: bad vertex line "${line.slice(0, 80)}"`)
      }
      positions.push3(x, y, z)
      normals.push3(facet[0]!, facet[1]!, facet[2]!)
      corner++
    } else if (keyword === 'endfacet') {
      if (corner !== 3) throw new ModelInputError(`invalid ASCII STL: a facet has ${corner} vertices, not 3`)
      const t = positions.length / 9 - 1
      fixFacetNormal(normals, positions, t)
    } else if (keyword === 'endsolid') {
      finish()
      name = ''
    } else if (keyword !== 'outer' && keyword !== 'endloop') {
      throw new ModelInputError(`invalid ASCII STL: unexpected "${tokens[0]!.slice(0, 40)}"`)
    }
  }
  finish()
  if (!sawSolid || solids.length === 0) throw new ModelInputError('STL file holds no triangles')
  return buildDocument(new Document(), solids)
}

function setFacetNormal(normals: Float32Array, positions: Float32Array, t: number, nx: number, ny: number, nz: number): void {
  let n = [nx, ny, nz]
  if (!(Math.hypot(nx, ny, nz) > 1e-12)) n = faceNormal(positions, t * 9)
  for (let c = 0; c < 3; c++) for (let k = 0; k < 3; k++) normals[t * 9 + c * 3 + k] = n[k]!
}

function fixFacetNormal(normals: GrowableArray<Float32Array>, positions: GrowableArray<Float32Array>, t: number): void {
  const base = t * 9
  if (Math.hypot(normals.get(base), normals.get(base + 1), normals.get(base + 2)) > 1e-12) return
  const p = new Float32Array(9)
  for (let k = 0; k < 9; k++) p[k] = positions.get(base + k)
  const n = faceNormal(p, 0)
  // GrowableArray has no random write: rewrite the three corners through a replacement.
  normals.length -= 9
  for (let c = 0; c < 3; c++) normals.push3(n[0]!, n[1]!, n[2]!)
}

/** Unit normal of the triangle at `base` (9 floats), or +Z for a degenerate one. */
function faceNormal(p: ArrayLike<number>, base: number): number[] {
  const ux = p[base + 3]! - p[base]!,
    uy = p[base + 4]! - p[base + 1]!,
    uz = p[base + 5]! - p[base + 2]!
  const vx = p[base + 6]! - p[base]!,
    vy = p[base + 7]! - p[base + 1]!,
    vz = p[base + 8]! - p[base + 2]!
  const x = uy * vz - uz * vy,
    y = uz * vx - ux * vz,
    z = ux * vy - uy * vx
  const len = Math.hypot(x, y, z)
  return len > 0 ? [x / len, y / len, z / len] : [0, 0, 1]
}

/**
 * Writes binary STL: every triangle of the flattened scene, facet normals from the geometry. Points
 * and lines cannot be held and are dropped (target-holds.ts notes them).
 */
export function writeStl(doc: Document): Uint8Array {
  const prims = flattenDocument(doc)
  const tris = prims.filter((p) => p.mode === 4)
  const total = tris.reduce((sum, p) => sum + p.indices.length / 3, 0)
  const bytes = new Uint8Array(HEADER + 4 + total * RECORD)
  const view = new DataView(bytes.buffer)
  // The header must not start with "solid": readers would take the file for ASCII.
  bytes.set(new TextEncoder().encode('binary STL written by Mos'), 0)
  view.setUint32(HEADER, total, true)
  const corners = new Float32Array(9)
  let at = HEADER + 4
  for (const p of tris) {
    const { positions, indices } = p
    for (let t = 0; t < indices.length; t += 3) {
      for (let c = 0; c < 3; c++) {
        const v = indices[t + c]! * 3
        corners[c * 3] = positions[v]!
        corners[c * 3 + 1] = positions[v + 1]!
        corners[c * 3 + 2] = positions[v + 2]!
      }
      const n = faceNormal(corners, 0)
      view.setFloat32(at, n[0]!, true)
      view.setFloat32(at + 4, n[1]!, true)
      view.setFloat32(at + 8, n[2]!, true)
      for (let k = 0; k < 9; k++) view.setFloat32(at + 12 + k * 4, corners[k]!, true)
      at += RECORD
    }
  }
  return bytes
}
