import { ModelInputError, ReaderFaultError } from '../errors.ts'
import { isGlb } from './gltf.ts'
import { checkAllocation, type ReadOptions } from './limits.ts'

const COMPONENT_SIZES: Record<number, number> = { 5120: 1, 5121: 1, 5122: 2, 5123: 2, 5125: 4, 5126: 4 }
const TYPE_COMPONENTS: Record<string, number> = { SCALAR: 1, VEC2: 2, VEC3: 3, VEC4: 4, MAT2: 4, MAT3: 9, MAT4: 16 }

interface AccessorJson {
  count?: unknown
  type?: unknown
  componentType?: unknown
}

/**
 * Refuses a glTF whose accessors declare (count × element size, summed) more bytes than the
 * allocation bound: glTF-Transform allocates each accessor's array up front, and sparse or
 * compressed accessors are decoded to that size whatever the file's length.
 */
export function checkGltfAllocation(json: { accessors?: unknown[] }, options: ReadOptions = {}): void {
  let total = 0
  for (const accessor of (json.accessors ?? []) as AccessorJson[]) {
    if (typeof accessor !== 'object' || accessor === null) continue
    const count = typeof accessor.count === 'number' ? accessor.count : 0
    const size = (COMPONENT_SIZES[accessor.componentType as number] ?? 4) * (TYPE_COMPONENTS[accessor.type as string] ?? 1)
    if (!(count >= 0)) throw new ModelInputError(`invalid glTF: accessor count ${String(accessor.count)}`)
    total += count * size
  }
  checkAllocation(total, `glTF accessors (${(json.accessors ?? []).length})`, options)
}

/** Reads the JSON chunk of a GLB for the allocation check, without touching the binary chunk. */
export function glbJson(bytes: Uint8Array): { accessors?: unknown[] } | undefined {
  if (!isGlb(bytes) || bytes.byteLength < 20) return undefined
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const length = view.getUint32(12, true)
  if (view.getUint32(16, true) !== 0x4e4f534a || 20 + length > bytes.byteLength) return undefined
  try {
    return JSON.parse(new TextDecoder().decode(bytes.subarray(20, 20 + length))) as { accessors?: unknown[] }
  } catch {
    return undefined // readGlb reports the malformed JSON with its own message
  }
}

/** The JSON of a .gltf file for the allocation check (undefined when it does not parse). */
export function gltfJson(bytes: Uint8Array): { accessors?: unknown[] } | undefined {
  try {
    const start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0
    const json = JSON.parse(new TextDecoder().decode(bytes.subarray(start))) as unknown
    return typeof json === 'object' && json !== null ? (json as { accessors?: unknown[] }) : undefined
  } catch {
    return undefined
  }
}

/**
 * Runs a glTF read, turning glTF-Transform's internal errors on malformed JSON (wrong member types,
 * short arrays) into ModelInputErrors that say the input is invalid.
 */
export async function asInputError<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read()
  } catch (error) {
    if (error instanceof ModelInputError) throw error
    throw new ReaderFaultError(`invalid glTF: ${error instanceof Error ? error.message : String(error)}`)
  }
}
