import { Accessor, type Document } from '@gltf-transform/core'

/** The bits of glTF-Transform's meshopt octahedral filter for normals and tangents. */
export const OCTAHEDRAL_BITS = 8

/** The part of meshoptimizer's encoder this needs. */
export interface OctahedralEncoder {
  encodeFilterOct(source: Float32Array, count: number, stride: number, bits: number): Uint8Array
  encodeVertexBuffer(source: Uint8Array, count: number, size: number): Uint8Array
}

/**
 * Whether meshopt codes the file's normals and tangents smaller as 8-bit octahedral codes (the
 * filter) than as plain 8-bit xyz, measured by encoding both. Usually it does (2CylinderEngine:
 * −5% of the file), but on a smooth surface whose normals lie near the octahedron's fold, the codes
 * jump from one side to the other where xyz changes smoothly (the generated grid: +0.4%).
 */
export function octahedralPays(doc: Document, bits: number, encoder: OctahedralEncoder): boolean {
  const accessors = [...floatNormals(doc)]
  const count = accessors.reduce((n, a) => n + a.getCount(), 0)
  if (count === 0) return true
  const floats = new Float32Array(count * 4)
  let vertex = 0
  for (const a of accessors) vertex = vec4Into(a, floats, vertex)
  const xyz = new Int8Array(floats.length)
  for (let i = 0; i < floats.length; i++) xyz[i] = Math.round(Math.max(-1, Math.min(1, floats[i]!)) * 127)
  const octahedral = encoder.encodeVertexBuffer(encoder.encodeFilterOct(floats, count, 4, bits), count, 4)
  const plain = encoder.encodeVertexBuffer(new Uint8Array(xyz.buffer), count, 4)
  return octahedral.byteLength <= plain.byteLength
}

/**
 * With filters, meshopt stores normals and tangents as 8-bit octahedral codes, quantized from the
 * floats it is given. Quantizing them to 8-bit xyz first (quantize()'s way) rounds twice: noisier
 * codes, 12% larger on a smooth mesh. Leaving them as floats rounds once but stops welding, since
 * vertices that will share a code still differ (chr_knight +30%). So each becomes the float its
 * octahedral code decodes to: welded like quantized values, encoded to the same code again.
 * Near the octahedron's fold (z ≈ 0) a decoded vector can encode to the other, equivalent code,
 * which breaks the runs the codec compresses: those keep their original float.
 */
export function snapNormalsToOctahedralGrid(doc: Document, bits: number, encoder: OctahedralEncoder): void {
  for (const a of floatNormals(doc)) snapAccessor(a, bits, encoder)
}

/** The float NORMAL and TANGENT accessors of the document's primitives (not morph targets' deltas). */
function floatNormals(doc: Document): Set<Accessor> {
  const accessors = new Set<Accessor>()
  for (const mesh of doc.getRoot().listMeshes()) {
    for (const prim of mesh.listPrimitives()) {
      for (const semantic of ['NORMAL', 'TANGENT']) {
        const a = prim.getAttribute(semantic)
        if (a && a.getComponentType() === Accessor.ComponentType.FLOAT) accessors.add(a)
      }
    }
  }
  return accessors
}

function snapAccessor(a: Accessor, bits: number, encoder: OctahedralEncoder): void {
  const count = a.getCount()
  const size = a.getElementSize()
  const values = a.getArray() as Float32Array
  const original = new Float32Array(count * 4)
  vec4Into(a, original, 0)
  const snapped = original.slice()
  const max = 2 ** (bits - 1) - 1
  for (let i = 0; i < count; i++) octahedralRoundTrip(snapped, i * 4, max)
  const stride = bits > 8 ? 8 : 4
  const before = encoder.encodeFilterOct(original, count, stride, bits)
  const after = encoder.encodeFilterOct(snapped, count, stride, bits)
  for (let i = 0; i < count; i++) {
    let same = true
    for (let b = 0; b < stride; b++) same &&= before[i * stride + b] === after[i * stride + b]
    if (!same) continue
    for (let k = 0; k < 3; k++) values[i * size + k] = snapped[i * 4 + k]!
  }
  a.setArray(values)
}

/**
 * Writes a normal (VEC3) or tangent (VEC4) accessor into `out` from vertex `first` on, as the four
 * floats per vertex the filter takes (w stays 0 for normals); returns the vertex after the last.
 * Plain element copies: a subarray per vertex cost more than the rest of the pass.
 */
function vec4Into(a: Accessor, out: Float32Array, first: number): number {
  const size = a.getElementSize()
  const values = a.getArray() as Float32Array
  const count = a.getCount()
  for (let i = 0; i < count; i++) {
    for (let k = 0; k < size; k++) out[(first + i) * 4 + k] = values[i * size + k]!
  }
  return first + count
}

/**
 * meshopt_encodeFilterOct's folding and rounding (half away from zero), then its decoding, in place
 * on the xyz at `at` (left as they are when they have no direction).
 */
function octahedralRoundTrip(xyz: Float32Array, at: number, max: number): void {
  const x = xyz[at]!,
    y = xyz[at + 1]!,
    z = xyz[at + 2]!
  const l1 = Math.abs(x) + Math.abs(y) + Math.abs(z)
  if (!(l1 > 0) || !Number.isFinite(l1)) return
  const nx = x / l1
  const ny = y / l1
  const u = snorm(z >= 0 ? nx : (1 - Math.abs(ny)) * (nx >= 0 ? 1 : -1), max)
  const v = snorm(z >= 0 ? ny : (1 - Math.abs(nx)) * (ny >= 0 ? 1 : -1), max)
  const w = 1 - Math.abs(u) - Math.abs(v)
  const t = Math.max(-w, 0)
  const dx = u - t * (u >= 0 ? 1 : -1)
  const dy = v - t * (v >= 0 ? 1 : -1)
  const length = Math.hypot(dx, dy, w)
  xyz[at] = dx / length
  xyz[at + 1] = dy / length
  xyz[at + 2] = w / length
}

function snorm(value: number, max: number): number {
  return Math.trunc(value * max + (value >= 0 ? 0.5 : -0.5)) / max
}
