/**
 * A small BMP decoder: textures of older models (MD2, LightWave, many OBJ and COLLADA exports from
 * Windows tools) are BMPs, which glTF cannot hold and neither sharp nor assimp's glTF export turns
 * into anything else. Covers the uncompressed layouts Windows and DCC tools write: 1-, 4- and 8-bit
 * palettes, 16-bit (5-5-5 or bit fields), 24-bit, 32-bit (bit fields with or without alpha), rows
 * either way up, and the run-length coded 8- and 4-bit palettes (BI_RLE8, BI_RLE4: Paint, Paint Shop Pro
 * and old DCC tools wrote them for skins); embedded JPEG/PNG bitmaps and OS/2's RLE24 are left to the caller's note.
 */
import { DECODED_IMAGE_MAX_PIXELS, type RgbaImage } from './tga.ts'

/** What the file and info headers say, of a BMP this decoder handles. */
interface BmpHeader {
  width: number
  height: number
  /** Rows stored top row first (a negative height in the file). */
  topDown: boolean
  bitsPerPixel: number
  /** Where the pixel rows start. */
  pixelOffset: number
  /** RGBA entries of the colour table (1-, 4- and 8-bit images). */
  palette: Uint8Array
  /** Red, green, blue and alpha masks of 16- and 32-bit pixels (alpha 0: opaque). */
  masks: [number, number, number, number]
  /** 0 plain rows, 1 BI_RLE8, 2 BI_RLE4, 3 and 6 bit fields. */
  compression: number
}

/** The masks of uncompressed 16- and 32-bit pixels (BI_RGB): 5-5-5, and 8-8-8 with the fourth byte unused. */
const DEFAULT_MASKS: Record<number, [number, number, number, number]> = {
  16: [0x7c00, 0x03e0, 0x001f, 0],
  32: [0x00ff0000, 0x0000ff00, 0x000000ff, 0],
}

/** Decodes a BMP file, or returns undefined when the bytes are not a BMP this decoder handles. */
export function decodeBmp(bytes: Uint8Array): RgbaImage | undefined {
  const header = readBmpHeader(bytes)
  if (!header) return undefined
  const { width, height, bitsPerPixel, pixelOffset, topDown } = header
  if (header.compression === 1 || header.compression === 2) return decodeRle(header, bytes)
  const stride = Math.ceil((width * bitsPerPixel) / 32) * 4
  if (pixelOffset + stride * height > bytes.byteLength) return undefined
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const data = new Uint8Array(width * height * 4)
  for (let y = 0; y < height; y++) {
    const row = pixelOffset + (topDown ? y : height - 1 - y) * stride
    for (let x = 0; x < width; x++) if (!putPixel(header, bytes, view, row, x, data, (y * width + x) * 4)) return undefined
  }
  return { width, height, data }
}

/** The headers of a BMP, or undefined where the file is not one, is compressed or declares more than it holds. */
function readBmpHeader(bytes: Uint8Array): BmpHeader | undefined {
  if (bytes.byteLength < 26 || bytes[0] !== 0x42 || bytes[1] !== 0x4d) return undefined
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const pixelOffset = view.getUint32(10, true)
  const infoSize = view.getUint32(14, true)
  // OS/2's 12-byte core header: 16-bit sizes, 3-byte colour table entries, no compression.
  const core = infoSize === 12
  if (!core && (infoSize < 40 || bytes.byteLength < 14 + infoSize)) return undefined
  const width = core ? view.getUint16(18, true) : view.getInt32(18, true)
  const rawHeight = core ? view.getUint16(20, true) : view.getInt32(22, true)
  const bitsPerPixel = view.getUint16(core ? 24 : 28, true)
  const compression = core ? 0 : view.getUint32(30, true)
  const height = Math.abs(rawHeight)
  if (width <= 0 || height === 0 || width * height > DECODED_IMAGE_MAX_PIXELS) return undefined
  // 0 BI_RGB; 1 BI_RLE8 and 2 BI_RLE4 of their bit depth only, stored bottom-up (the format allows no other);
  // 3 BI_BITFIELDS and 6 BI_ALPHABITFIELDS carry masks. JPEG (4) and PNG (5) are not read here.
  const rle = (compression === 1 && bitsPerPixel === 8) || (compression === 2 && bitsPerPixel === 4)
  const fields = (compression === 3 || compression === 6) && (bitsPerPixel === 16 || bitsPerPixel === 32)
  if (compression !== 0 && !(rle && rawHeight > 0) && !fields) return undefined
  if (![1, 4, 8, 16, 24, 32].includes(bitsPerPixel)) return undefined
  const masks = fields ? readMasks(view, infoSize, compression) : DEFAULT_MASKS[bitsPerPixel]
  const palette = bitsPerPixel <= 8 ? readPalette(bytes, view, core, infoSize, compression) : new Uint8Array(0)
  if (!masks && bitsPerPixel > 8 && bitsPerPixel !== 24) return undefined
  if (bitsPerPixel <= 8 && palette.byteLength === 0) return undefined
  return { width, height, topDown: rawHeight < 0, bitsPerPixel, pixelOffset, palette, masks: masks ?? [0, 0, 0, 0], compression }
}

/** Bit field masks: inside a V2+ info header, else the 12 (or 16, with alpha) bytes after a 40-byte one. */
function readMasks(view: DataView, infoSize: number, compression: number): [number, number, number, number] | undefined {
  const at = 14 + 40
  const withAlpha = infoSize >= 56 || compression === 6
  if (at + (withAlpha ? 16 : 12) > view.byteLength) return undefined
  return [
    view.getUint32(at, true),
    view.getUint32(at + 4, true),
    view.getUint32(at + 8, true),
    withAlpha ? view.getUint32(at + 12, true) : 0,
  ]
}

/** The colour table as RGBA (opaque: BMP's fourth byte is reserved), or empty where it runs past the file. */
function readPalette(bytes: Uint8Array, view: DataView, core: boolean, infoSize: number, compression: number): Uint8Array {
  const bitsPerPixel = view.getUint16(core ? 24 : 28, true)
  const declared = core ? 0 : view.getUint32(46, true)
  const count = declared > 0 && declared <= 1 << bitsPerPixel ? declared : 1 << bitsPerPixel
  const entrySize = core ? 3 : 4
  // A 40-byte header's bit field masks come before the colour table; RLE files have none.
  const start = 14 + infoSize + (infoSize === 40 && (compression === 3 || compression === 6) ? 12 : 0)
  if (start + count * entrySize > bytes.byteLength) return new Uint8Array(0)
  const palette = new Uint8Array(count * 4)
  for (let i = 0; i < count; i++) {
    const at = start + i * entrySize
    palette.set([bytes[at + 2]!, bytes[at + 1]!, bytes[at]!, 255], i * 4)
  }
  return palette
}

/**
 * Decodes BI_RLE8 and BI_RLE4 pixel data (the BMP specification's run-length coding): a count byte then
 * an index repeated (RLE4: two indices alternating), or 0 then an escape: 0 end of row, 1 end of
 * bitmap, 2 a move right and up by the next two bytes, 3 and more that many literal indices, padded
 * to an even byte count. Pixels a move or an early end of row skips stay transparent, as browsers
 * draw them. Data that ends before its end-of-bitmap ends the image there (encoders differ on writing
 * it); an index off the colour table, or a run past the image, is a damaged file: undefined.
 */
function decodeRle(header: BmpHeader, bytes: Uint8Array): RgbaImage | undefined {
  const { width, height, palette, pixelOffset } = header
  const four = header.compression === 2
  const data = new Uint8Array(width * height * 4)
  let x = 0
  let row = 0 // in storage order: 0 is the bottom row
  const put = (index: number): boolean => {
    const entry = index * 4
    if (entry >= palette.byteLength || x >= width || row >= height) return false
    const o = ((height - 1 - row) * width + x++) * 4
    data[o] = palette[entry]!
    data[o + 1] = palette[entry + 1]!
    data[o + 2] = palette[entry + 2]!
    data[o + 3] = palette[entry + 3]!
    return true
  }
  for (let at = pixelOffset; at + 1 < bytes.byteLength; ) {
    const count = bytes[at]!
    const value = bytes[at + 1]!
    at += 2
    if (count > 0) {
      for (let i = 0; i < count; i++) if (!put(four ? (i & 1 ? value & 15 : value >> 4) : value)) return undefined
    } else if (value === 0) {
      x = 0
      row++
    } else if (value === 1) {
      break
    } else if (value === 2) {
      x += bytes[at] ?? 0
      row += bytes[at + 1] ?? 0
      at += 2
    } else {
      const length = four ? Math.ceil(value / 2) : value
      if (at + length > bytes.byteLength) return undefined
      for (let i = 0; i < value; i++) {
        const byte = bytes[at + (four ? i >> 1 : i)]!
        if (!put(four ? (i & 1 ? byte & 15 : byte >> 4) : byte)) return undefined
      }
      at += length + (length & 1)
    }
  }
  return { width, height, data }
}

/** Writes pixel `x` of the row at byte `row` as RGBA at `out[o]`; false for an index off the colour table. */
function putPixel(header: BmpHeader, bytes: Uint8Array, view: DataView, row: number, x: number, out: Uint8Array, o: number): boolean {
  const { bitsPerPixel, palette, masks } = header
  if (bitsPerPixel <= 8) {
    const bit = x * bitsPerPixel
    const index = (bytes[row + (bit >> 3)]! >> (8 - bitsPerPixel - (bit & 7))) & ((1 << bitsPerPixel) - 1)
    const entry = index * 4
    if (entry >= palette.byteLength) return false
    // Four plain copies: a subarray per pixel allocated a view 67 million times for an 8192² image.
    out[o] = palette[entry]!
    out[o + 1] = palette[entry + 1]!
    out[o + 2] = palette[entry + 2]!
    out[o + 3] = palette[entry + 3]!
  } else if (bitsPerPixel === 24) {
    const at = row + x * 3
    out[o] = bytes[at + 2]!
    out[o + 1] = bytes[at + 1]!
    out[o + 2] = bytes[at]!
    out[o + 3] = 255
  } else {
    const value = bitsPerPixel === 16 ? view.getUint16(row + x * 2, true) : view.getUint32(row + x * 4, true)
    out[o] = maskedChannel(value, masks[0])
    out[o + 1] = maskedChannel(value, masks[1])
    out[o + 2] = maskedChannel(value, masks[2])
    out[o + 3] = masks[3] ? maskedChannel(value, masks[3]) : 255
  }
  return true
}

/**
 * The masked bits of `value` scaled to 0–255 (a 5-bit 31 becomes 255, as every decoder does); wider
 * fields keep their top 8 bits. BMP bit fields and DDS pixel formats (dds.ts) are read alike.
 *
 * @example
 * maskedChannel(0x7c00, 0x7c00) // 255
 */
export function maskedChannel(value: number, mask: number): number {
  if (mask === 0) return 0
  const shift = 31 - Math.clz32(mask & -mask) // the mask's trailing zeros
  const bits = 32 - Math.clz32(mask >>> shift)
  const raw = (value & mask) >>> shift
  return bits >= 8 ? raw >>> (bits - 8) : Math.round((raw * 255) / ((1 << bits) - 1))
}
