/** The JSON chunk of a GLB, read without any glTF library (so decoding cannot hide what is stored). */
export function readGlbJson(bytes: Uint8Array): GltfJson {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (bytes.byteLength < 20 || view.getUint32(0, true) !== 0x46546c67) throw new Error('not a GLB (no "glTF" magic)')
  const length = view.getUint32(12, true)
  if (view.getUint32(16, true) !== 0x4e4f534a) throw new Error('the first GLB chunk is not JSON')
  return JSON.parse(new TextDecoder().decode(bytes.subarray(20, 20 + length))) as GltfJson
}

/** The images a GLB embeds (bufferView images), as bytes; URI images are left out. */
export function glbImages(bytes: Uint8Array): Uint8Array[] {
  const json = readGlbJson(bytes)
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const jsonLength = view.getUint32(12, true)
  const binStart = 20 + jsonLength
  if (binStart + 8 > bytes.byteLength) return []
  const bin = bytes.subarray(binStart + 8, binStart + 8 + view.getUint32(binStart, true))
  return (json.images ?? []).flatMap((image) => {
    if (image.bufferView === undefined) return []
    const bufferView = json.bufferViews?.[image.bufferView]
    if (!bufferView) return []
    const start = bufferView.byteOffset ?? 0
    return [bin.subarray(start, start + bufferView.byteLength)]
  })
}

export interface GltfJson {
  images?: { bufferView?: number; mimeType?: string; uri?: string }[]
  extensionsUsed?: string[]
  extensionsRequired?: string[]
  meshes?: { primitives: { attributes: Record<string, number>; indices?: number; extensions?: Record<string, unknown> }[] }[]
  accessors?: { bufferView?: number }[]
  bufferViews?: { byteOffset?: number; byteLength: number; extensions?: Record<string, unknown> }[]
}

/**
 * How many mesh primitives are stored without the compression `extension` names: Draco marks each
 * compressed primitive; meshopt (EXT_ or KHR_) marks the buffer views holding the primitive's accessors.
 */
export function uncompressedPrimitives(json: GltfJson, extension: string): { total: number; uncompressed: number } {
  let total = 0
  let uncompressed = 0
  for (const mesh of json.meshes ?? []) {
    for (const primitive of mesh.primitives) {
      total++
      if (extension === 'KHR_draco_mesh_compression') {
        if (!primitive.extensions?.[extension]) uncompressed++
        continue
      }
      const accessors = [...Object.values(primitive.attributes), ...(primitive.indices === undefined ? [] : [primitive.indices])]
      const plain = accessors.some((index) => {
        const view = json.accessors?.[index]?.bufferView
        return view !== undefined && !json.bufferViews?.[view]?.extensions?.[extension]
      })
      if (plain) uncompressed++
    }
  }
  return { total, uncompressed }
}
