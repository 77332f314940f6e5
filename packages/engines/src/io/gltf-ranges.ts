import { ModelInputError } from '../errors.ts'

interface ViewRange {
  buffer: number
  byteOffset?: number
  byteLength: number
}

interface RangeJson {
  buffers?: { uri?: string; byteLength?: number }[]
  bufferViews?: (ViewRange & { byteStride?: number; extensions?: Record<string, ViewRange | undefined> })[]
  accessors?: { bufferView?: number; byteOffset?: number; count: number; componentType: number; type: string }[]
}

/** Bytes of each accessor component type, by its GL enum (the same in glTF 1.0 and 2.0). */
export const COMPONENT_BYTES: Record<number, number> = { 5120: 1, 5121: 1, 5122: 2, 5123: 2, 5125: 4, 5126: 4 }
/** Components of each accessor type. */
export const TYPE_COMPONENTS: Record<string, number> = { SCALAR: 1, VEC2: 2, VEC3: 3, VEC4: 4, MAT2: 4, MAT3: 9, MAT4: 16 }

/** The key glTF-Transform gives the GLB binary chunk in a JSONDocument's resources. */
const GLB_BUFFER = '@glb.bin'

/** Decoded size of a base64 data URI, without decoding it. */
function dataUriBytes(uri: string): number | undefined {
  const comma = uri.indexOf(',')
  if (!uri.startsWith('data:') || comma < 0 || !uri.slice(0, comma).endsWith(';base64')) return undefined
  const data = uri.slice(comma + 1)
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0
  return Math.floor((data.length * 3) / 4) - padding
}

/**
 * Refuses buffer views that run past their buffer and accessors that run past their view.
 * glTF-Transform would read them anyway, and a small buffer decoded from a data URI sits in Node's
 * shared buffer pool: a view past its end would read bytes that are not the file's.
 */
export function assertGltfRanges(json: RangeJson, resources: Record<string, Uint8Array | null | undefined>): void {
  const lengths = (json.buffers ?? []).map((buffer, i) => {
    if (buffer.uri === undefined) {
      // Buffer 0 of a GLB is its binary chunk; any other buffer without data is a meshopt fallback,
      // filled by the decoder to its declared length.
      return i === 0 && resources[GLB_BUFFER] ? resources[GLB_BUFFER].byteLength : (buffer.byteLength ?? 0)
    }
    return resources[buffer.uri]?.byteLength ?? dataUriBytes(buffer.uri) ?? 0
  })
  const checkRange = (range: ViewRange, what: string) => {
    const length = lengths[range.buffer]
    if (length === undefined) throw new ModelInputError(`invalid glTF: ${what} points at buffer ${range.buffer}, which does not exist`)
    const end = (range.byteOffset ?? 0) + range.byteLength
    if (!(end <= length)) {
      throw new ModelInputError(`invalid glTF: ${what} ends at byte ${end}, past the ${length} bytes of buffer ${range.buffer}`)
    }
  }
  const views = json.bufferViews ?? []
  views.forEach((view, i) => {
    checkRange(view, `bufferView ${i}`)
    // Compressed views read their data from the extension's range.
    for (const [name, ext] of Object.entries(view.extensions ?? {})) {
      if (ext && /meshopt_compression$/.test(name)) checkRange(ext, `bufferView ${i} (${name})`)
    }
  })
  ;(json.accessors ?? []).forEach((accessor, i) => {
    if (accessor.bufferView === undefined || accessor.count === 0) return
    const view = views[accessor.bufferView]
    if (!view) throw new ModelInputError(`invalid glTF: accessor ${i} points at bufferView ${accessor.bufferView}, which does not exist`)
    const element = (COMPONENT_BYTES[accessor.componentType] ?? 0) * (TYPE_COMPONENTS[accessor.type] ?? 0)
    const end = (accessor.byteOffset ?? 0) + (view.byteStride ?? element) * (accessor.count - 1) + element
    if (!(end <= view.byteLength)) {
      throw new ModelInputError(
        `invalid glTF: accessor ${i} ends at byte ${end}, past the ${view.byteLength} bytes of bufferView ${accessor.bufferView}`,
      )
    }
  })
}
