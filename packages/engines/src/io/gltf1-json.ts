import { COMPONENT_BYTES, TYPE_COMPONENTS } from './gltf-ranges.ts'

/** A glTF 1.0 object (a node, an accessor…), read member by member. */
export type Entry = Record<string, unknown>

/** The entries of a glTF 1.0 collection (an object keyed by id), skipping what is not an object. */
export function entries(collection: Record<string, Entry> | undefined): [string, Entry][] {
  if (typeof collection !== 'object' || collection === null) return []
  return Object.entries(collection).filter((entry): entry is [string, Entry] => typeof entry[1] === 'object' && entry[1] !== null)
}

/** The parts of a glTF 1.0 JSON its accessors are read through. */
export interface Gltf1Data {
  accessors?: Record<string, Entry>
  bufferViews?: Record<string, Entry>
}

/** An accessor's values, packed, with its element type ('VEC3'…) and WebGL component type. */
export interface Gltf1Values {
  values: number[]
  type: string
  componentType: number
  count: number
}

/** DataView getters of the component types glTF 1.0 declares. */
const READERS: Record<number, (view: DataView, offset: number) => number> = {
  5120: (view, offset) => view.getInt8(offset),
  5121: (view, offset) => view.getUint8(offset),
  5122: (view, offset) => view.getInt16(offset, true),
  5123: (view, offset) => view.getUint16(offset, true),
  5125: (view, offset) => view.getUint32(offset, true),
  5126: (view, offset) => view.getFloat32(offset, true),
}

/**
 * The values of a 1.0 accessor (its byteStride honoured), from `buffers` (each 1.0 buffer's bytes by
 * id); undefined where the accessor, its view or its buffer is missing or its types are unknown. The
 * reader (gltf1.ts) has checked before that every accessor lies inside its view and buffer.
 */
export function readGltf1Accessor(json: Gltf1Data, id: unknown, buffers: Map<string, Uint8Array>): Gltf1Values | undefined {
  const accessor = typeof id === 'string' ? json.accessors?.[id] : undefined
  const view = accessor && json.bufferViews?.[String(accessor.bufferView)]
  const bytes = view && buffers.get(String(view.buffer))
  const componentType = Number(accessor?.componentType)
  const read = READERS[componentType]
  const type = String(accessor?.type)
  const components = TYPE_COMPONENTS[type]
  if (!accessor || !bytes || !read || !components) return undefined
  const element = COMPONENT_BYTES[componentType]! * components
  const stride = Number(accessor.byteStride) || element
  const start = bytes.byteOffset + Number(view.byteOffset ?? 0) + Number(accessor.byteOffset ?? 0)
  const count = Number(accessor.count)
  const data = new DataView(bytes.buffer)
  const size = COMPONENT_BYTES[componentType]!
  const values = new Array<number>(count * components)
  for (let i = 0; i < count; i++) {
    for (let c = 0; c < components; c++) values[i * components + c] = read(data, start + i * stride + c * size)
  }
  return { values, type, componentType, count }
}

/** The bytes of a data URI, base64 or percent-encoded. */
export function decodeDataUri(uri: string): Uint8Array {
  const comma = uri.indexOf(',')
  const data = uri.slice(comma + 1)
  if (/;base64$/i.test(uri.slice(0, comma))) return new Uint8Array(Buffer.from(data, 'base64'))
  return new Uint8Array(
    Buffer.from(
      data.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
      'latin1',
    ),
  )
}
