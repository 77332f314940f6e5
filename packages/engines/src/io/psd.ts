/**
 * A Photoshop (PSD, and PSB: version 2) decoder of the flattened image every file written with
 * "Maximize compatibility" (Photoshop's default) carries after its layers: artists' FBX, COLLADA and OBJ
 * exports reference their PSDs as textures. Reads RGB, grey, duotone (its grey plane), indexed, bitmap and
 * CMYK (by its ink values, no colour profile), 8 and 16 bits a channel, raw or PackBits; the first channel
 * past those of the colour mode is alpha, as ImageMagick and game engines read it. Layers are not read.
 */
import { DECODED_IMAGE_MAX_PIXELS, type RgbaImage, type UndecodedImage } from './tga.ts'

/** Colour modes, by the header's number, and the channels each needs. */
const BITMAP = 0
const GREY = 1
const INDEXED = 2
const RGB = 3
const CMYK = 4
const DUOTONE = 8
const MODE_CHANNELS: Record<number, number> = { [BITMAP]: 1, [GREY]: 1, [INDEXED]: 1, [RGB]: 3, [CMYK]: 4, [DUOTONE]: 1 }
const MODE_NAMES: Record<number, string> = { 7: 'multichannel', 9: 'Lab colour' }

/** What the sections before the image data say, of a PSD this decoder reads. */
interface PsdLayout {
  width: number
  height: number
  /** Bits a channel sample: 1 (bitmap), 8 or 16. */
  depth: number
  mode: number
  /** Channels stored, and those read: the mode's, and alpha where there is one more. */
  channels: number
  read: number
  /** 768 bytes of an indexed image's colour table: all reds, then greens, then blues. */
  palette: Uint8Array
  /** Where the image data section starts (its compression field). */
  offset: number
  /** PSB: RLE row lengths are 4 bytes, not 2. */
  big: boolean
  /** The layers' transparency is the alpha: the flattened colours were laid over white. */
  matted: boolean
}

/**
 * Decodes a PSD or PSB file's flattened image, or returns undefined when the bytes are not one this
 * decoder reads ({@link undecodedPsd} says why).
 *
 * @example
 * decodePsd(psdBytes) // { width: 512, height: 512, data }
 */
export function decodePsd(bytes: Uint8Array): RgbaImage | undefined {
  const layout = readPsd(bytes)
  if (!layout || 'what' in layout) return undefined
  const data = new Uint8Array(layout.width * layout.height * 4)
  return readChannels(bytes, layout, data) ? { width: layout.width, height: layout.height, data } : undefined
}

/**
 * What a PSD that {@link decodePsd} refused is, for its note: its kind where Mos does not convert it
 * (Lab, multichannel, 32-bit HDR, no flattened image), else damaged (cut short, a row's run past its
 * end, over 8192 × 8192 pixels). Undefined for bytes that are not a PSD.
 *
 * @example
 * undecodedPsd(labBytes) // { what: 'a Photoshop (PSD) image in Lab colour', damaged: false }
 */
export function undecodedPsd(bytes: Uint8Array): UndecodedImage | undefined {
  const layout = readPsd(bytes)
  if (!layout) return undefined
  return 'what' in layout ? layout : { what: 'a Photoshop (PSD) image', damaged: true }
}

/** The header and the sections before the image data, or why the file is not decoded; undefined when the bytes are not a PSD. */
function readPsd(bytes: Uint8Array): PsdLayout | UndecodedImage | undefined {
  if (bytes.byteLength < 4 || String.fromCharCode(...bytes.subarray(0, 4)) !== '8BPS') return undefined
  const damaged = { what: 'a Photoshop (PSD) image', damaged: true }
  const unusable = (how: string) => ({ what: `a Photoshop (PSD) image ${how}`, damaged: false })
  if (bytes.byteLength < 26) return damaged
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const [version, channels, height, width] = [view.getUint16(4), view.getUint16(12), view.getUint32(14), view.getUint32(18)]
  const [depth, mode] = [view.getUint16(22), view.getUint16(24)]
  const needed = MODE_CHANNELS[mode]
  if (needed === undefined) return unusable(`in ${MODE_NAMES[mode] ?? `colour mode ${mode}`}`)
  if (depth === 32) return unusable('of 32-bit floating-point channels (HDR)')
  if ((version !== 1 && version !== 2) || channels < needed || ![1, 8, 16].includes(depth) || (depth === 1) !== (mode === BITMAP))
    return damaged
  if (width === 0 || height === 0 || width * height > DECODED_IMAGE_MAX_PIXELS) return damaged
  const sections = readSections(bytes, view, version === 2)
  if (!sections) return damaged
  if (!sections.merged) return unusable('saved without "Maximize compatibility" (it holds no flattened image)')
  const compression = sections.offset + 2 <= bytes.byteLength ? view.getUint16(sections.offset) : -1
  if (compression === 2 || compression === 3) return unusable('whose flattened image is ZIP-compressed')
  if (compression !== 0 && compression !== 1) return damaged
  if (mode === INDEXED && sections.palette.byteLength < 768) return damaged
  const layout = { width, height, depth, mode, channels, read: Math.min(channels, needed + 1), ...sections, big: version === 2 }
  return imageDataFits(view, layout) ? layout : damaged
}

/**
 * Whether the rows of the channels read lie within the file (raw rows, or RLE rows by the lengths in
 * their table), checked before the image is allocated: a header of 8192 × 8192 pixels on a few bytes
 * would otherwise cost 256 MB first. PackBits packs at most 128 bytes in 2, so the data is never more
 * than 64 times smaller than the image.
 */
function imageDataFits(view: DataView, layout: PsdLayout): boolean {
  const { width, height, depth, channels, read, offset, big } = layout
  const rowBytes = Math.ceil((width * depth) / 8)
  if (view.getUint16(offset) === 0) return offset + 2 + read * height * rowBytes <= view.byteLength
  const countBytes = big ? 4 : 2
  const rows = offset + 2 + channels * height * countBytes
  if (rows > view.byteLength) return false
  let total = 0
  for (let i = 0; i < read * height; i++) total += big ? view.getUint32(offset + 2 + i * 4) : view.getUint16(offset + 2 + i * 2)
  return rows + total <= view.byteLength
}

/**
 * The colour mode data, image resources and layer sections: the palette, whether the file holds a
 * flattened image (resource 0x0421's hasRealMergedData), whether its alpha is the layers' transparency
 * (a negative layer count), and where the image data starts; undefined where a length runs past the file.
 */
function readSections(
  bytes: Uint8Array,
  view: DataView,
  big: boolean,
): { palette: Uint8Array; merged: boolean; matted: boolean; offset: number } | undefined {
  const length = (at: number, wide: boolean) => (wide ? view.getUint32(at) * 2 ** 32 + view.getUint32(at + 4) : view.getUint32(at))
  if (30 > bytes.byteLength) return undefined
  const modeLength = length(26, false)
  const resources = 30 + modeLength
  if (resources + 4 > bytes.byteLength) return undefined
  const resourcesEnd = resources + 4 + length(resources, false)
  const layers = resourcesEnd
  const width = big ? 8 : 4
  if (layers + width > bytes.byteLength) return undefined
  const layersLength = length(layers, big)
  const offset = layers + width + layersLength
  if (offset > bytes.byteLength) return undefined
  // The layer info's own length comes first, then its layer count (none where that length is 0: a global mask only).
  const count = layersLength >= width * 2 + 2 && length(layers + width, big) >= 2 ? view.getInt16(layers + width * 2) : 0
  return {
    palette: bytes.subarray(30, 30 + modeLength),
    merged: hasMergedImage(bytes, view, resources + 4, resourcesEnd),
    matted: count < 0,
    offset,
  }
}

/** Whether the version info resource (0x0421), if there is one, says the file holds a flattened image. */
function hasMergedImage(bytes: Uint8Array, view: DataView, from: number, end: number): boolean {
  for (let at = from; at + 12 <= end; ) {
    const id = view.getUint16(at + 4)
    const nameLength = bytes[at + 6]! + 1
    const sizeAt = at + 6 + nameLength + (nameLength & 1)
    if (sizeAt + 4 > end) return true
    const size = view.getUint32(sizeAt)
    if (id === 0x0421 && size >= 5 && sizeAt + 9 <= end) return bytes[sizeAt + 8] !== 0
    at = sizeAt + 4 + size + (size & 1)
  }
  return true
}

/**
 * Reads the channels into `data` as RGBA: each into its slot (CMYK's black into alpha's until it is
 * applied, alpha last), then grey and colour-table indices widened; false where the data is short or
 * a run overruns its row.
 */
function readChannels(bytes: Uint8Array, layout: PsdLayout, data: Uint8Array): boolean {
  const { width, height, depth, channels, read, offset, big, mode } = layout
  const rowBytes = Math.ceil((width * depth) / 8)
  const rle = bytes[offset + 1] === 1
  const countBytes = big ? 4 : 2
  let at = offset + 2 + (rle ? channels * height * countBytes : 0)
  if (at > bytes.byteLength) return false
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const row = new Uint8Array(rowBytes)
  for (let c = 0; c < read; c++) {
    for (let y = 0; y < height; y++) {
      const index = c * height + y
      const length = !rle ? rowBytes : big ? view.getUint32(offset + 2 + index * 4) : view.getUint16(offset + 2 + index * 2)
      if (at + length > bytes.byteLength || !(rle ? unpackBits(bytes, at, length, row) : copyRow(bytes, at, row))) return false
      at += length
      toSamples(row, depth, width, data, y * width * 4 + Math.min(c, 3))
    }
    if (mode === CMYK && c === 3) inksToLight(data)
  }
  if (read === MODE_CHANNELS[mode]) for (let o = 3; o < data.length; o += 4) data[o] = 255
  widen(data, layout)
  if (read > MODE_CHANNELS[mode]! && layout.matted) unmatte(data)
  return true
}

function copyRow(bytes: Uint8Array, at: number, row: Uint8Array): boolean {
  row.set(bytes.subarray(at, at + row.byteLength))
  return true
}

/** PackBits (Apple's run-length coding): n < 128 copies n + 1 bytes, n > 128 repeats the next byte 257 − n times, 128 is nothing. */
function unpackBits(bytes: Uint8Array, at: number, length: number, row: Uint8Array): boolean {
  const end = at + length
  let o = 0
  while (at < end) {
    const n = bytes[at++]!
    if (n < 128) {
      if (at + n + 1 > end || o + n + 1 > row.byteLength) return false
      row.set(bytes.subarray(at, at + n + 1), o)
      at += n + 1
      o += n + 1
    } else if (n > 128) {
      if (at >= end || o + 257 - n > row.byteLength) return false
      row.fill(bytes[at++]!, o, o + 257 - n)
      o += 257 - n
    }
  }
  return o === row.byteLength
}

/** One row's samples into every fourth byte of `data` from `o`: 16-bit big-endian rounded to 8 bits, 1-bit (bitmap: 1 is black) as 0 or 255. */
function toSamples(row: Uint8Array, depth: number, width: number, data: Uint8Array, o: number): void {
  for (let x = 0; x < width; x++, o += 4) {
    if (depth === 8) data[o] = row[x]!
    else if (depth === 16) data[o] = Math.round(((row[x * 2]! << 8) | row[x * 2 + 1]!) / 257)
    else data[o] = (row[x >> 3]! >> (7 - (x & 7))) & 1 ? 0 : 255
  }
}

/** Photoshop stores CMYK inks inverted (255: no ink): each channel of light is what its ink and black (in the alpha slot) leave. */
function inksToLight(data: Uint8Array): void {
  for (let o = 0; o < data.length; o += 4) {
    const k = data[o + 3]!
    for (let c = 0; c < 3; c++) data[o + c] = Math.round((data[o + c]! * k) / 255)
  }
}

/** Grey (bitmap, grey, duotone) copied to green and blue; colour-table indices (indexed) looked up. */
function widen(data: Uint8Array, { mode, palette }: PsdLayout): void {
  if (mode === RGB || mode === CMYK) return
  for (let o = 0; o < data.length; o += 4) {
    const value = data[o]!
    if (mode === INDEXED) {
      data[o] = palette[value]!
      data[o + 1] = palette[256 + value]!
      data[o + 2] = palette[512 + value]!
    } else data[o + 1] = data[o + 2] = value
  }
}

/** Photoshop lays a flattened image with transparent layers over white: colour = (stored − (1 − alpha) × 255) / alpha. */
function unmatte(data: Uint8Array): void {
  for (let o = 0; o < data.length; o += 4) {
    const alpha = data[o + 3]!
    if (alpha === 0 || alpha === 255) continue
    for (let c = 0; c < 3; c++) data[o + c] = Math.max(0, Math.min(255, Math.round(((data[o + c]! - 255) * 255) / alpha + 255)))
  }
}
