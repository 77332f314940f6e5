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

/**
 * Largest image the readers' own decoders (TGA, BMP) decode, in pixels: the texture limit's default
 * (8192², 256 MB of RGBA), which the texture operations check on the header. A few MB of RLE packets
 * (128 pixels in 4 bytes) or of 1-bit BMP rows declare far more: at 16384² a 2 MB TGA took 1 GB.
 */
export const DECODED_IMAGE_MAX_PIXELS = 8192 * 8192

/** What the 18-byte header says, of a TGA this decoder handles. */
interface TgaHeader {
  /** 1 colour-mapped, 2 true-colour, 3 grey. */
  kind: number
  rle: boolean
  width: number
  height: number
  /** Bits per pixel. */
  depth: number
  /** Bit 5 set: rows top-down. */
  descriptor: number
  /** The first colour-map index pixels use, and bits per colour-map entry. */
  mapStart: number
  mapDepth: number
  /** Where the colour map starts (after the image ID), and its length in bytes. */
  mapOffset: number
  mapBytes: number
}

/** Where a pixel's colour comes from: the file's bytes, read by its header, and its colour map. */
interface TgaSource {
  bytes: Uint8Array
  header: TgaHeader
  palette: Uint8Array | undefined
  pixelSize: number
}

/** Decodes a TGA file, or returns undefined when the bytes are not a TGA this decoder handles. */
export function decodeTga(bytes: Uint8Array): RgbaImage | undefined {
  const header = readTgaHeader(bytes)
  if (!header) return undefined
  const { width, height, kind, mapOffset, mapBytes } = header
  const palette = kind === 1 ? bytes.subarray(mapOffset, mapOffset + mapBytes) : undefined
  const source: TgaSource = { bytes, header, palette, pixelSize: header.depth / 8 }
  const data = new Uint8Array(width * height * 4)
  const offset = mapOffset + mapBytes
  if (!(header.rle ? decodeRlePixels(source, offset, data) : decodeRawPixels(source, offset, data))) return undefined
  // TGA stores rows bottom-up unless bit 5 of the descriptor says top-down.
  if ((header.descriptor & 0x20) === 0) flipRows(data, width, height)
  return { width, height, data }
}

function readTgaHeader(bytes: Uint8Array): TgaHeader | undefined {
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
  if (width * height > DECODED_IMAGE_MAX_PIXELS) return undefined
  if (kind === 2 && depth !== 24 && depth !== 32) return undefined
  if ((kind === 3 || kind === 1) && depth !== 8) return undefined
  if (kind === 1 && (colorMapType !== 1 || (mapDepth !== 24 && mapDepth !== 32))) return undefined
  const mapBytes = colorMapType === 1 ? mapLength * Math.ceil(mapDepth / 8) : 0
  return { kind, rle, width, height, depth, descriptor, mapStart, mapDepth, mapOffset: 18 + idLength, mapBytes }
}

/** Uncompressed pixels from `offset` on; false when the file ends first or an index is outside the colour map. */
function decodeRawPixels(source: TgaSource, offset: number, data: Uint8Array): boolean {
  const pixels = data.length / 4
  for (let index = 0; index < pixels; index++, offset += source.pixelSize) if (!putPixel(source, data, index, offset)) return false
  return true
}

/** Run-length packets from `offset` on: a repeated pixel, or a run of raw ones; false when the data is short or overruns. */
function decodeRlePixels(source: TgaSource, offset: number, data: Uint8Array): boolean {
  const { bytes, pixelSize } = source
  const pixels = data.length / 4
  let index = 0
  while (index < pixels) {
    if (offset >= bytes.byteLength) return false
    const packet = bytes[offset++]!
    const count = (packet & 0x7f) + 1
    if (index + count > pixels) return false
    if (packet & 0x80) {
      for (let i = 0; i < count; i++) if (!putPixel(source, data, index++, offset)) return false
      offset += pixelSize
    } else {
      for (let i = 0; i < count; i++, offset += pixelSize) if (!putPixel(source, data, index++, offset)) return false
    }
  }
  return true
}

/** Writes pixel `index` as RGBA from the file's pixel at byte `at`; false when it is past the end or off the colour map. */
function putPixel(source: TgaSource, data: Uint8Array, index: number, at: number): boolean {
  const { bytes, header, palette } = source
  if (at + source.pixelSize > bytes.byteLength) return false
  const o = index * 4
  if (header.kind === 2) {
    data[o] = bytes[at + 2]!
    data[o + 1] = bytes[at + 1]!
    data[o + 2] = bytes[at]!
    data[o + 3] = header.depth === 32 ? bytes[at + 3]! : 255
  } else if (header.kind === 3) {
    data[o] = data[o + 1] = data[o + 2] = bytes[at]!
    data[o + 3] = 255
  } else {
    const entry = (bytes[at]! - header.mapStart) * (header.mapDepth / 8)
    if (!palette || entry < 0 || entry + header.mapDepth / 8 > palette.byteLength) return false
    data[o] = palette[entry + 2]!
    data[o + 1] = palette[entry + 1]!
    data[o + 2] = palette[entry]!
    data[o + 3] = header.mapDepth === 32 ? palette[entry + 3]! : 255
  }
  return true
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
