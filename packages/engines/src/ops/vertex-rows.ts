import type { Accessor, TypedArray } from '@gltf-transform/core'

/**
 * Every vertex's attribute bytes as one row of 32-bit words (an attribute of 6 bytes takes 2 words,
 * zero-padded), so that two vertices are bitwise equal in every attribute exactly when their rows are.
 * An attribute shorter than `count` (a malformed file) leaves zeros in the rows it lacks.
 */
export function vertexRows(attributes: Accessor[], count: number): { keys: Uint32Array; stride: number } {
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
    const dst = unit === 4 ? keys : unit === 2 ? new Uint16Array(keys.buffer) : new Uint8Array(keys.buffer)
    copyColumn(src, dst, perRow, stride * perKey, column * perKey, rows)
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
export function createRowSet(keys: Uint32Array, stride: number, count: number): (vertex: number) => number {
  let size = 1
  while (size < count * 2) size <<= 1
  const mask = size - 1
  const slots = new Int32Array(size * 2).fill(-1) // [vertex, hash] pairs
  return function add(vertex) {
    let h = 0x9e3779b9
    for (let i = vertex * stride, end = i + stride; i < end; i++) h = Math.imul(h ^ keys[i]!, 0x85ebca6b) ^ (h >>> 13)
    // murmur3's finaliser: rows that differ only in their last words (neighbours on a grid) would
    // otherwise land in neighbouring slots, and linear probing would walk long runs.
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
    h ^= h >>> 16
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
  const sources = new Uint32Array(dstCount).fill(0xffffffff)
  const uses = order ? order.length : vertexCount
  for (let i = 0; i < uses; i++) {
    const from = order ? order[i]! : i
    const to = remap[from]!
    if (to < dstCount && sources[to] === 0xffffffff) sources[to] = from
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
  const to = unit === 4 ? new Uint32Array(dst.buffer) : unit === 2 ? new Uint16Array(dst.buffer) : new Uint8Array(dst.buffer)
  gatherRows(words, to, rowBytes / unit, sources, rows)
  return dst
}

function gatherRows(src: Words, dst: Words, perRow: number, sources: Uint32Array, rows: number): void {
  for (let i = 0; i < sources.length; i++) {
    const from = sources[i]!
    if (from >= rows) continue
    for (let k = 0, a = from * perRow, b = i * perRow; k < perRow; k++) dst[b + k] = src[a + k]!
  }
}
