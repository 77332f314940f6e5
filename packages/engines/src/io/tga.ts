/**
 * A small TGA decoder: assimp passes TGA textures through untouched (glTF has no TGA), and neither
 * sharp nor any browser reads them. Covers what DCC tools write: true-colour 24/32-bit, grey 8-bit,
 * colour-mapped 8-bit, each raw or RLE, either origin.
 */
export interface RgbaImage {
  width: number
  height: number
  /** width × height × 4 bytes, top row first. */
  data: Uint8Array
}

/** Largest TGA (in pixels) decoded; a 16k × 16k texture is already far beyond what a model needs. */
export const TGA_MAX_PIXELS = 16384 * 16384

/** Decodes a TGA file, or returns undefined when the bytes are not a TGA this decoder handles. */
export function decodeTga(bytes: Uint8Array): RgbaImage | undefined {
  if (bytes.byteLength < 18) return undefined
  const idLength = bytes[0]!
  const colorMapType = bytes[1]!
  const imageType = bytes[2]!
  const mapStart = bytes[3]! | (bytes[4]! << 8)
  const mapLength = bytes[5]! | (bytes[6]! << 8)
  const mapDepth = bytes[7]!
  const width = bytes[12]! | (bytes[13]! << 8)
  const height = bytes[14]! | (bytes[15]! << 8)
  const depth = bytes[16]!
  const descriptor = bytes[17]!
  const rle = imageType >= 9
  const kind = imageType & 7 // 1 colour-mapped, 2 true-colour, 3 grey
  if (![1, 2, 3].includes(kind) || colorMapType > 1 || width === 0 || height === 0) return undefined
  if (width * height > TGA_MAX_PIXELS) return undefined
  if (kind === 2 && depth !== 24 && depth !== 32) return undefined
  if ((kind === 3 || kind === 1) && depth !== 8) return undefined
  if (kind === 1 && (colorMapType !== 1 || (mapDepth !== 24 && mapDepth !== 32))) return undefined
  let offset = 18 + idLength
  let palette: Uint8Array | undefined
  const mapBytes = colorMapType === 1 ? mapLength * Math.ceil(mapDepth / 8) : 0
  if (kind === 1) palette = bytes.subarray(offset, offset + mapBytes)
  offset += mapBytes
  const pixelSize = depth / 8
  const pixels = width * height
  const data = new Uint8Array(pixels * 4)
  const put = (index: number, at: number): boolean => {
    if (at + pixelSize > bytes.byteLength) return false
    const o = index * 4
    if (kind === 2) {
      data[o] = bytes[at + 2]!
      data[o + 1] = bytes[at + 1]!
      data[o + 2] = bytes[at]!
      data[o + 3] = depth === 32 ? bytes[at + 3]! : 255
    } else if (kind === 3) {
      data[o] = data[o + 1] = data[o + 2] = bytes[at]!
      data[o + 3] = 255
    } else {
      const entry = (bytes[at]! - mapStart) * (mapDepth / 8)
      if (!palette || entry < 0 || entry + mapDepth / 8 > palette.byteLength) return false
      data[o] = palette[entry + 2]!
      data[o + 1] = palette[entry + 1]!
      data[o + 2] = palette[entry]!
      data[o + 3] = mapDepth === 32 ? palette[entry + 3]! : 255
    }
    return true
  }
  let index = 0
  while (index < pixels) {
    if (!rle) {
      if (!put(index++, offset)) return undefined
      offset += pixelSize
      continue
    }
    if (offset >= bytes.byteLength) return undefined
    const packet = bytes[offset++]!
    const count = (packet & 0x7f) + 1
    if (index + count > pixels) return undefined
    if (packet & 0x80) {
      for (let i = 0; i < count; i++) if (!put(index++, offset)) return undefined
      offset += pixelSize
    } else {
      for (let i = 0; i < count; i++, offset += pixelSize) if (!put(index++, offset)) return undefined
    }
  }
  // TGA stores rows bottom-up unless bit 5 of the descriptor says top-down.
  if ((descriptor & 0x20) === 0) flipRows(data, width, height)
  return { width, height, data }
}

function flipRows(data: Uint8Array, width: number, height: number): void {
  const row = width * 4
  const swap = new Uint8Array(row)
  for (let top = 0, bottom = height - 1; top < bottom; top++, bottom--) {
    swap.set(data.subarray(top * row, top * row + row))
    data.copyWithin(top * row, bottom * row, bottom * row + row)
    data.set(swap, bottom * row)
  }
}
