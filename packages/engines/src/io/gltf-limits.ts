import { errorMessage, type GltfSource, ModelInputError, ReaderFaultError } from '../errors.ts'
import { isGlb } from './gltf.ts'
import { isGltf1Json } from './gltf1.ts'
import { assertJsonDepth } from './json-depth.ts'
import { gltfJsonText } from './gltf-text.ts'
import { checkAllocation, type ReadOptions } from './limits.ts'

const COMPONENT_SIZES: Record<number, number> = { 5120: 1, 5121: 1, 5122: 2, 5123: 2, 5125: 4, 5126: 4 }
const TYPE_COMPONENTS: Record<string, number> = { SCALAR: 1, VEC2: 2, VEC3: 3, VEC4: 4, MAT2: 4, MAT3: 9, MAT4: 16 }

interface SparsePartJson {
  bufferView?: unknown
  byteOffset?: unknown
  componentType?: unknown
}

interface AccessorJson {
  count?: unknown
  type?: unknown
  componentType?: unknown
  sparse?: { count?: unknown; indices?: SparsePartJson; values?: SparsePartJson }
}

/** The parts of a glTF JSON the allocation check reads. */
export interface LimitsJson {
  accessors?: unknown[]
  bufferViews?: unknown[]
  buffers?: unknown[]
}

interface MeshoptJson {
  byteLength?: unknown
  byteStride?: unknown
  count?: unknown
}

/**
 * Most bytes meshopt's codecs can decode from one compressed byte, with margin: the version-0
 * attribute codec spends at least a 2-bit header per 16 bytes (64:1), version 1 can mark a whole
 * byte lane of a 256-vertex block constant in 2 bits (1024:1), the index codecs at least a byte per
 * triangle or index (12:1, 4:1).
 */
const MESHOPT_MAX_RATIO = 1024

/**
 * Bytes the meshopt decoder will write for a file: every compressed view's count × stride (refused
 * when its compressed bytes could not hold that much), and every fallback buffer, allocated to its
 * declared length. A 25 KB GLB declaring one view of 10^8 elements took 20 s and 800 MB to fail.
 */
function meshoptBytes(json: LimitsJson): number {
  let total = 0
  for (const [i, view] of (Array.isArray(json.bufferViews) ? json.bufferViews : []).entries()) {
    const extensions = (view as { extensions?: Record<string, MeshoptJson | undefined> } | null)?.extensions
    if (typeof extensions !== 'object' || extensions === null) continue
    for (const [name, ext] of Object.entries(extensions)) {
      if (!/meshopt_compression$/.test(name) || typeof ext !== 'object' || ext === null) continue
      const decoded = (typeof ext.count === 'number' ? ext.count : 0) * (typeof ext.byteStride === 'number' ? ext.byteStride : 0)
      const compressed = typeof ext.byteLength === 'number' ? ext.byteLength : 0
      if (!(decoded <= MESHOPT_MAX_RATIO * compressed + 65_536)) {
        throw new ModelInputError(
          `invalid glTF: bufferView ${i} declares ${decoded} bytes of ${name} data in ${compressed} compressed bytes, more than the codec can hold`,
        )
      }
      total += decoded
    }
  }
  for (const buffer of Array.isArray(json.buffers) ? json.buffers : []) {
    const b = buffer as { byteLength?: unknown; extensions?: Record<string, { fallback?: unknown } | undefined> } | null
    const fallback = Object.entries(b?.extensions ?? {}).some(([name, ext]) => /meshopt_compression$/.test(name) && ext?.fallback === true)
    if (fallback && typeof b?.byteLength === 'number') total += b.byteLength
  }
  return total
}

/**
 * Refuses a glTF whose accessors declare (count × element size, summed, sparse entries included)
 * more bytes than the allocation bound: glTF-Transform allocates each accessor's array up front,
 * and sparse or compressed accessors are decoded to that size whatever the file's length. Sparse
 * entries must also fit their accessor and their views: glTF-Transform loops over the declared
 * count, so 10^9 entries in a 600-byte file held a thread until the task time-out.
 */
export function checkGltfAllocation(json: LimitsJson, options: ReadOptions = {}): void {
  let total = 0
  const views = Array.isArray(json.bufferViews) ? json.bufferViews : []
  // glTF 2.0 holds arrays; anything else (glTF 1.0's objects keyed by id) is not this check's to size.
  const accessors = (Array.isArray(json.accessors) ? json.accessors : []) as AccessorJson[]
  for (const [i, accessor] of accessors.entries()) {
    if (typeof accessor !== 'object' || accessor === null) continue
    const count = typeof accessor.count === 'number' ? accessor.count : 0
    const size = (COMPONENT_SIZES[accessor.componentType as number] ?? 4) * (TYPE_COMPONENTS[accessor.type as string] ?? 1)
    if (!(count >= 0)) throw new ModelInputError(`invalid glTF: accessor count ${String(accessor.count)}`)
    total += count * size
    const sparse = accessor.sparse
    if (typeof sparse !== 'object' || sparse === null) continue
    const entries = typeof sparse.count === 'number' ? sparse.count : 0
    if (!(entries >= 0 && entries <= count)) {
      throw new ModelInputError(
        `invalid glTF: accessor ${i} declares ${String(sparse.count)} sparse entries, more than its ${count} elements`,
      )
    }
    const indexSize = COMPONENT_SIZES[sparse.indices?.componentType as number] ?? 4
    checkSparsePart(views, sparse.indices, entries * indexSize, `accessor ${i}'s sparse indices`)
    checkSparsePart(views, sparse.values, entries * size, `accessor ${i}'s sparse values`)
    total += entries * (indexSize + size)
  }
  checkAllocation(total, `glTF accessors (${accessors.length})`, options)
  checkAllocation(meshoptBytes(json), 'meshopt-compressed glTF data', options)
}

/** Sparse indices or values must lie inside the bufferView they name (its declared length; the view's own range is checked later). */
function checkSparsePart(views: unknown[], part: SparsePartJson | undefined, bytes: number, what: string): void {
  if (typeof part !== 'object' || part === null || typeof part.bufferView !== 'number') return
  const view = views[part.bufferView] as { byteLength?: unknown } | undefined
  const length = typeof view === 'object' && view !== null && typeof view.byteLength === 'number' ? view.byteLength : undefined
  if (length === undefined) throw new ModelInputError(`invalid glTF: ${what} point at bufferView ${part.bufferView}, which does not exist`)
  const end = (typeof part.byteOffset === 'number' ? part.byteOffset : 0) + bytes
  if (!(end <= length))
    throw new ModelInputError(`invalid glTF: ${what} need ${end} bytes, past the ${length} bytes of bufferView ${part.bufferView}`)
}

/**
 * Reads the JSON chunk of a GLB for the allocation check, without touching the binary chunk.
 * Throws when the JSON nests too deeply; undefined when it does not parse.
 */
export function glbJson(bytes: Uint8Array): LimitsJson | undefined {
  if (!isGlb(bytes) || bytes.byteLength < 20) return undefined
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const length = view.getUint32(12, true)
  if (view.getUint32(16, true) !== 0x4e4f534a || 20 + length > bytes.byteLength) return undefined
  const text = new TextDecoder().decode(bytes.subarray(20, 20 + length))
  assertJsonDepth(text, 'glTF JSON')
  try {
    const json = JSON.parse(text) as unknown
    return typeof json === 'object' && json !== null ? (json as LimitsJson) : undefined
  } catch {
    return undefined // readGlb reports the malformed JSON with its own message
  }
}

/** The JSON of a .gltf file for the allocation check; throws when it is not JSON text or nests too deeply, undefined when it does not parse. */
export function gltfJson(bytes: Uint8Array): LimitsJson | undefined {
  const text = gltfJsonText(bytes)
  try {
    const json = JSON.parse(text) as unknown
    return typeof json === 'object' && json !== null ? (json as LimitsJson) : undefined
  } catch {
    return undefined
  }
}

/**
 * The checks every glTF input passes before anything parses it for real (glTF-Transform,
 * glTF-Validator): JSON depth, declared allocation, sparse entries. Other formats pass through.
 */
export function checkGltfInput(bytes: Uint8Array, format: string, options: ReadOptions = {}): void {
  if (format !== 'glb' && format !== 'gltf') return
  const json = format === 'glb' ? glbJson(bytes) : gltfJson(bytes)
  // glTF 1.0 is read through assimp, whose reader checks it (gltf1.ts).
  if (!isGltf1Json(json)) checkGltfAllocation(json ?? {}, options)
}

/** glTF-Transform's words for a file that requires an extension it has no reader for. */
const MISSING_EXTENSION = /^Missing required extension, "(.*)"\.$/

/**
 * Runs a glTF read, turning glTF-Transform's internal errors on malformed JSON (wrong member types,
 * short arrays) into ModelInputErrors that say the input is invalid. A file that requires an
 * extension Mos cannot read is valid glTF, and is refused as what it is (BoxTextured's
 * KHR_technique_webgl; gltfpack's KHR_meshopt_compression was refused so until Mos read it).
 */
export async function asInputError<T>(read: () => Promise<T>, gltf?: GltfSource): Promise<T> {
  try {
    return await read()
  } catch (error) {
    if (error instanceof ModelInputError) throw error
    const missing = MISSING_EXTENSION.exec(errorMessage(error))
    if (missing) throw new ModelInputError(`unsupported glTF extension: the file requires ${missing[1]}, which Mos cannot read`)
    throw new ReaderFaultError(`invalid glTF: ${errorMessage(error)}`, gltf)
  }
}
