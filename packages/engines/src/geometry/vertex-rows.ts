import type { Accessor, Primitive, TypedArray } from '@gltf-transform/core'
import { mix32 } from './mix32.ts'

/** A vertex number not (yet) given. */
export const NO_VERTEX = 0xffffffff

/** Accessors describing each vertex, each once: base attributes, then each morph target's attributes. */
export function vertexAccessors(prim: Primitive): Accessor[] {
  return [...new Set([...prim.listAttributes(), ...prim.listTargets().flatMap((target) => target.listAttributes())])]
}

/**
 * For each vertex, the first vertex whose bytes are identical to it in every given accessor
 * (itself when none earlier is). Bitwise: -0 and 0 differ, a NaN equals the same NaN.
 */
export function canonicalVertices(accessors: Accessor[], vertexCount: number): { canonical: Uint32Array; duplicates: number } {
  const { keys, stride } = vertexRows(accessors, vertexCount)
  const add = createRowSet(keys, stride, vertexCount)
  const canonical = new Uint32Array(vertexCount)
  let duplicates = 0
  for (let v = 0; v < vertexCount; v++) {
    const earlier = add(v)
    canonical[v] = earlier === -1 ? v : earlier
    if (earlier !== -1) duplicates++
  }
  return { canonical, duplicates }
}

/**
 * Numbers vertices in order of first use in `order` (an index buffer; every vertex when null), as
 * glTF-Transform's compaction does; vertices of one `canonical` class (canonicalVertices) share a
 * number. Returns the source → destination map (NO_VERTEX for unused vertices) and the count.
 */
export function firstUseNumbering(order: ArrayLike<number> | null, vertexCount: number, canonical?: Uint32Array): [Uint32Array, number] {
  const remap = new Uint32Array(vertexCount).fill(NO_VERTEX)
  const uses = order ? order.length : vertexCount
  let next = 0
  for (let i = 0; i < uses; i++) {
    const vertex = order ? order[i]! : i
    if (remap[vertex] !== NO_VERTEX) continue
    const first = canonical ? canonical[vertex]! : vertex
    if (remap[first] === NO_VERTEX) remap[first] = next++
    remap[vertex] = remap[first]!
  }
  return [remap, next]
}

/**
 * Every vertex's attribute bytes as one row of 32-bit words (an attribute of 6 bytes takes 2 words,
 * zero-padded), so that two vertices are bitwise equal in every attribute exactly when their rows are.
 * An attribute shorter than `count` (a malformed file) leaves zeros in the rows it lacks.
 */
function vertexRows(attributes: Accessor[], count: number): { keys: Uint32Array; stride: number } {
  const sizes = attributes.map((accessor) => accessor.getElementSize() * accessor.getComponentSize())
  const stride = sizes.reduce((sum, bytes) => sum + Math.ceil(bytes / 4), 0)
  const keys = new Uint32Array(count * stride)
  let column = 0
  attributes.forEach((accessor, a) => {
    const array = accessor.getArray()!
    const rows = Math.min(count, Math.floor(array.byteLength / sizes[a]!))
    const { words: src, unit } = wordsOf(array, sizes[a]!, rows)
    const perRow = sizes[a]! / unit
    const perKey = 4 / unit
    copyColumn(src, wordsView(keys.buffer, unit), perRow, stride * perKey, column * perKey, rows)
    column += Math.ceil(sizes[a]! / 4)
  })
  return { keys, stride }
}

function copyColumn(src: Words, dst: Words, perRow: number, dstStride: number, dstColumn: number, count: number): void {
  for (let vertex = 0; vertex < count; vertex++) {
    for (let k = 0, a = vertex * perRow, b = vertex * dstStride + dstColumn; k < perRow; k++) dst[b + k] = src[a + k]!
  }
}

type Words = Uint32Array | Uint16Array | Uint8Array

/** A whole buffer as unsigned words of `unit` bytes. */
function wordsView(buffer: ArrayBufferLike, unit: 1 | 2 | 4): Words {
  return unit === 4 ? new Uint32Array(buffer) : unit === 2 ? new Uint16Array(buffer) : new Uint8Array(buffer)
}

/** `count` rows of `rowBytes` from `array`, viewed as the widest unsigned words both divide. */
function wordsOf(array: TypedArray, rowBytes: number, count: number): { words: Words; unit: 1 | 2 | 4 } {
  const { buffer, byteOffset } = array
  if (rowBytes % 4 === 0 && byteOffset % 4 === 0) return { words: new Uint32Array(buffer, byteOffset, (count * rowBytes) / 4), unit: 4 }
  if (rowBytes % 2 === 0 && byteOffset % 2 === 0) return { words: new Uint16Array(buffer, byteOffset, (count * rowBytes) / 2), unit: 2 }
  return { words: new Uint8Array(buffer, byteOffset, count * rowBytes), unit: 1 }
}

/**
 * A set of `vertexRows` rows by hash (open addressing): `add(v)` returns an earlier vertex whose row
 * equals v's, or -1 after keeping v. Each slot keeps the row's hash beside its vertex, so a probe
 * reads the row itself only when the hashes match (one cache miss per insert, not one per probe).
 */
function createRowSet(keys: Uint32Array, stride: number, count: number): (vertex: number) => number {
  let size = 1
  while (size < count * 2) size <<= 1
  const mask = size - 1
  const slots = new Int32Array(size * 2).fill(-1) // [vertex, hash] pairs
  return function add(vertex) {
    let h = 0x9e3779b9
    for (let i = vertex * stride, end = i + stride; i < end; i++) h = Math.imul(h ^ keys[i]!, 0x85ebca6b) ^ (h >>> 13)
    // Rows that differ only in their last words (neighbours on a grid) land apart once mixed.
    h = mix32(h)
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const other = slots[slot * 2]!
      if (other === -1) {
        slots[slot * 2] = vertex
        slots[slot * 2 + 1] = h
        return -1
      }
      if (slots[slot * 2 + 1] === h && rowsEqual(keys, stride, other, vertex)) return other
    }
  }
}

function rowsEqual(keys: Uint32Array, stride: number, a: number, b: number): boolean {
  for (let i = 0, x = a * stride, y = b * stride; i < stride; i++) if (keys[x + i] !== keys[y + i]) return false
  return true
}

/**
 * For each destination vertex of `remap` (source → destination), its first source in `order` (the
 * index buffer; every vertex when null): glTF-Transform's compaction keeps the first occurrence.
 */
export function firstSources(order: ArrayLike<number> | null, vertexCount: number, remap: Uint32Array, dstCount: number): Uint32Array {
  const sources = new Uint32Array(dstCount).fill(NO_VERTEX)
  const uses = order ? order.length : vertexCount
  for (let i = 0; i < uses; i++) {
    const from = order ? order[i]! : i
    const to = remap[from]!
    if (to < dstCount && sources[to] === NO_VERTEX) sources[to] = from
  }
  return sources
}

/**
 * glTF-Transform's `compactAttribute`: element `i` of the result is element `sources[i]` of `src`
 * (zeros where there is none). The library copies component by component through whatever typed
 * array the accessor holds, which V8 cannot specialise, once per index; here each row moves once,
 * as whole words of one array type.
 */
export function compactedArray(src: TypedArray, elementSize: number, sources: Uint32Array): TypedArray {
  const dst = new (src.constructor as new (length: number) => TypedArray)(sources.length * elementSize)
  const rowBytes = elementSize * src.BYTES_PER_ELEMENT
  const rows = Math.floor(src.length / elementSize)
  const { words, unit } = wordsOf(src, rowBytes, rows)
  gatherRows(words, wordsView(dst.buffer, unit), rowBytes / unit, sources, rows)
  return dst
}

function gatherRows(src: Words, dst: Words, perRow: number, sources: Uint32Array, rows: number): void {
  for (let i = 0; i < sources.length; i++) {
    const from = sources[i]!
    if (from >= rows) continue
    for (let k = 0, a = from * perRow, b = i * perRow; k < perRow; k++) dst[b + k] = src[a + k]!
  }
}
