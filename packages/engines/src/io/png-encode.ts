import { crc32, deflateSync } from 'node:zlib'
import type { RgbaImage } from './tga.ts'

const SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)

/**
 * Encodes RGBA pixels as a PNG with node:zlib: enough to turn decoded TGA textures into something
 * glTF can hold, without asking sharp (which cannot read TGA) for anything.
 */
export function encodePng(image: RgbaImage): Uint8Array<ArrayBuffer> {
  const { width, height, data } = image
  const row = width * 4
  const raw = new Uint8Array((row + 1) * height)
  for (let y = 0; y < height; y++) raw.set(data.subarray(y * row, y * row + row), y * (row + 1) + 1) // filter 0
  return pngFile({ width, height, bitDepth: 8, colourType: 6, data: deflateSync(raw) })
}

/** What a PNG file holds besides its signature and end: the header's fields, the palette's chunks, the deflated scanlines. */
export interface PngParts {
  width: number
  height: number
  bitDepth: number
  colourType: number
  /** PLTE's body (indexed images). */
  palette?: Uint8Array
  /** tRNS's body, where some colour is not opaque. */
  transparency?: Uint8Array
  /** The zlib stream of the filtered scanlines. */
  data: Uint8Array
}

/** A PNG file of its parts: IHDR (deflate, adaptive filtering method, no interlace), PLTE, tRNS, one IDAT, IEND. */
export function pngFile(parts: PngParts): Uint8Array<ArrayBuffer> {
  const header = new Uint8Array(13)
  const view = new DataView(header.buffer)
  view.setUint32(0, parts.width)
  view.setUint32(4, parts.height)
  header.set([parts.bitDepth, parts.colourType, 0, 0, 0], 8)
  return concat([
    SIGNATURE,
    chunk('IHDR', header),
    ...(parts.palette ? [chunk('PLTE', parts.palette)] : []),
    ...(parts.transparency ? [chunk('tRNS', parts.transparency)] : []),
    chunk('IDAT', parts.data),
    chunk('IEND', new Uint8Array(0)),
  ])
}

function chunk(type: string, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + body.byteLength)
  const view = new DataView(out.buffer)
  view.setUint32(0, body.byteLength)
  out.set(new TextEncoder().encode(type), 4)
  out.set(body, 8)
  view.setUint32(8 + body.byteLength, crc32(out.subarray(4, 8 + body.byteLength)))
  return out
}

function concat(parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0))
  let offset = 0
  for (const part of parts) {
    out.set(part, offset)
    offset += part.byteLength
  }
  return out
}
