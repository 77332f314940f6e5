import { type Document, Format, type NodeIO } from '@gltf-transform/core'
import { unpartition } from '@gltf-transform/functions'
import { errorMessage, ModelInputError } from '../errors.ts'
import { compactGltfJson } from './compact-json.ts'
import { assertGltfRanges } from './gltf-ranges.ts'
import { GLB_MAGIC, isGlb } from './glb-header.ts'
import { gltfJsonText } from './gltf-text.ts'

export { isGlb } from './glb-header.ts'

/** The byte lengths of a GLB's JSON chunk and of its binary chunk (0 without one); undefined for what is not a whole GLB. */
export function glbChunkLengths(bytes: Uint8Array): { json: number; bin: number } | undefined {
  if (!isGlb(bytes) || bytes.byteLength < 20) return undefined
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const json = view.getUint32(12, true)
  if (20 + json > bytes.byteLength) return undefined
  return { json, bin: 20 + json + 8 <= bytes.byteLength ? view.getUint32(20 + json, true) : 0 }
}

/** Reads a binary glTF (.glb). External URIs are refused: the service never reads its own disk for a client. */
export async function readGlb(io: NodeIO, bytes: Uint8Array): Promise<Document> {
  if (!isGlb(bytes)) throw new ModelInputError('not a GLB file (bad magic header)')
  const header = new DataView(bytes.buffer, bytes.byteOffset, 12)
  // Version 1 (binary glTF 1.0) went to its own reader before this: any other number here is bytes
  // that are no GLB header, said as the input's fault ('glTF not really' holds 1953459744).
  const version = header.getUint32(4, true)
  if (version !== 2) throw new ModelInputError(`not a valid GLB: the header's version field holds ${version} (a GLB says 2)`)
  if (header.getUint32(8, true) > bytes.byteLength) {
    throw new ModelInputError(`truncated GLB: header declares ${header.getUint32(8, true)} bytes, file has ${bytes.byteLength}`)
  }
  const jsonDoc = await io.binaryToJSON(bytes).catch((error: unknown) => {
    throw new ModelInputError(`invalid GLB: ${errorMessage(error)}`)
  })
  refuseExternalResources(jsonDoc.json, jsonDoc.resources)
  assertGltfRanges(jsonDoc.json as never, jsonDoc.resources)
  return io.readJSON(jsonDoc)
}

/**
 * Reads a JSON glTF (.gltf) whose buffers and images are embedded as data URIs or supplied in
 * `resources` (e.g. from a zip). Anything else it points to is refused.
 */
export async function readGltf(io: NodeIO, bytes: Uint8Array, resources: Record<string, Uint8Array> = {}): Promise<Document> {
  let json: GltfJson
  const text = gltfJsonText(bytes)
  try {
    json = JSON.parse(text) as GltfJson
  } catch (error) {
    throw new ModelInputError(`invalid glTF JSON: ${errorMessage(error)}`)
  }
  if (typeof json !== 'object' || json === null || typeof json.asset !== 'object') {
    throw new ModelInputError('invalid glTF: missing "asset" object')
  }
  refuseExternalResources(json, resources)
  assertGltfRanges(json as never, resources)
  return io.readJSON({ json: json as never, resources: resources as Record<string, Uint8Array<ArrayBuffer>> })
}

/**
 * Writes a Document as a single GLB, its JSON compacted (compact-json.ts). The container is
 * glTF-Transform's `writeBinary`'s, byte for byte: a 12-byte header, the JSON chunk padded with
 * spaces and the binary chunk with zeros to 4 bytes.
 */
export async function writeGlb(io: NodeIO, doc: Document): Promise<Uint8Array> {
  // A GLB holds one binary chunk: glTF inputs with several buffers (simple_skin has four) are merged.
  if (doc.getRoot().listBuffers().length > 1) await doc.transform(unpartition())
  const { json, resources } = await io.writeJSON(doc, { format: Format.GLB })
  compactGltfJson(json)
  const chunk = (type: number, data: Uint8Array, pad: number) => {
    const padded = new Uint8Array(Math.ceil(data.byteLength / 4) * 4).fill(pad)
    padded.set(data)
    const header = new DataView(new ArrayBuffer(8))
    header.setUint32(0, padded.byteLength, true)
    header.setUint32(4, type, true)
    return [new Uint8Array(header.buffer), padded]
  }
  const bin = Object.values(resources)[0]
  const parts = [
    ...chunk(0x4e4f534a, new TextEncoder().encode(JSON.stringify(json)), 0x20),
    ...(bin && bin.byteLength > 0 ? chunk(0x004e4942, bin, 0) : []),
  ]
  const length = 12 + parts.reduce((sum, part) => sum + part.byteLength, 0)
  const out = new Uint8Array(length)
  const view = new DataView(out.buffer)
  view.setUint32(0, GLB_MAGIC, true)
  view.setUint32(4, 2, true)
  view.setUint32(8, length, true)
  let offset = 12
  for (const part of parts) {
    out.set(part, offset)
    offset += part.byteLength
  }
  return out
}

interface GltfJson {
  asset?: unknown
  buffers?: { uri?: string }[]
  images?: { uri?: string; bufferView?: number }[]
}

function refuseExternalResources(json: GltfJson, resources: Record<string, unknown>): void {
  for (const item of [...(json.buffers ?? []), ...(json.images ?? [])]) {
    const uri = item.uri
    if (uri === undefined || uri.startsWith('data:') || Object.hasOwn(resources, uri)) continue
    throw new ModelInputError(`external resource not available: "${uri}" (embed it, or upload a .glb or a .zip holding it)`)
  }
}
