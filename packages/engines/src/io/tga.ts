/**
 * A small TGA decoder: assimp passes TGA textures through untouched (glTF has no TGA), and neither
 * sharp nor any browser reads them. Covers what DCC tools write: true-colour 15/16/24/32-bit, grey
 * 8-bit, colour-mapped 8-bit (entries of 15, 16, 24 or 32 bits), each raw or RLE, either origin.
 */
export interface RgbaImage {
  width: number
  height: number
  /** width × height × 4 bytes, top row first. */
  data: Uint8Array
}

/**
 * Why the readers' own decoders (DDS, PSD) did not decode a file, for its note: what it is ('a DDS image
 * in BC6H (HDR)'), and whether it is damaged (cut short, over {@link DECODED_IMAGE_MAX_PIXELS}) rather
 * than of a kind Mos does not convert.
 */
export interface UndecodedImage {
  what: string
  damaged: boolean
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
  const source: TgaSource = { bytes, header, palette, pixelSize: Math.ceil(header.depth / 8) }
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
  if (kind === 2 && ![15, 16, 24, 32].includes(depth)) return undefined
  if ((kind === 3 || kind === 1) && depth !== 8) return undefined
  if (kind === 1 && (colorMapType !== 1 || ![15, 16, 24, 32].includes(mapDepth))) return undefined
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
  if (header.kind === 3) {
    data[o] = data[o + 1] = data[o + 2] = bytes[at]!
    data[o + 3] = 255
  } else if (header.kind === 2) {
    putColour(bytes, at, header.depth, header.descriptor, data, o)
  } else {
    const entrySize = Math.ceil(header.mapDepth / 8)
    const entry = (bytes[at]! - header.mapStart) * entrySize
    if (!palette || entry < 0 || entry + entrySize > palette.byteLength) return false
    putColour(palette, entry, header.mapDepth, header.descriptor, data, o)
  }
  return true
}

/** A 5-bit channel scaled to 0–255 (31 becomes 255), as the BMP decoder scales its 5-bit fields. */
const FIVE_BITS = Uint8Array.from({ length: 32 }, (_, v) => Math.round((v * 255) / 31))

/**
 * Writes the colour stored at `from[at]` in `depth` bits as RGBA: BGR(A) bytes, or a little-endian
 * 16-bit A1R5G5B5 (15-bit: no alpha bit). The alpha bit counts only where the descriptor's attribute
 * bits say there is one: many writers leave it 0 in opaque images (as the TGA 2.0 specification allows).
 */
function putColour(from: Uint8Array, at: number, depth: number, descriptor: number, data: Uint8Array, o: number): void {
  if (depth >= 24) {
    data[o] = from[at + 2]!
    data[o + 1] = from[at + 1]!
    data[o + 2] = from[at]!
    data[o + 3] = depth === 32 ? from[at + 3]! : 255
    return
  }
  const value = from[at]! | (from[at + 1]! << 8)
  data[o] = FIVE_BITS[(value >> 10) & 31]!
  data[o + 1] = FIVE_BITS[(value >> 5) & 31]!
  data[o + 2] = FIVE_BITS[value & 31]!
  data[o + 3] = depth === 16 && (descriptor & 15) === 1 ? (value & 0x8000 ? 255 : 0) : 255
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
