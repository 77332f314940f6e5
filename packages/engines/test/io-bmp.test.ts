import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { decodeBmp } from '../src/io/bmp.ts'
import { toGltfImage, unusableImageNote } from '../src/io/image-files.ts'
import { bmpPixel } from './support/source-pixels.ts'

/** Real BMPs of the assimp corpus: two 8-bit palette skins of MD2 models and a 1 × 1 24-bit one of LightWave. */
const { available, paths } = corpusFiles({
  faerie: assimp('MD2', 'faerie2.bmp'),
  sydney: assimp('MD2', 'sydney.bmp'),
  white: assimp('LWO', 'LWO2', 'white.bmp'),
})

/** A BMP of `pixels` (bytes of rows as stored, padded) behind a 40-byte or V5 (124-byte) info header. */
function bmp(options: {
  width: number
  height: number
  bits: number
  compression?: number
  masks?: number[]
  palette?: number[][]
  rows: ArrayLike<number>
}): Uint8Array {
  const { width, height, bits, compression = 0, masks, palette = [], rows } = options
  const infoSize = masks && masks.length === 4 ? 124 : 40
  const extra = infoSize === 40 && masks ? masks.length * 4 : 0
  const offset = 14 + infoSize + extra + palette.length * 4
  const bytes = new Uint8Array(offset + rows.length)
  const view = new DataView(bytes.buffer)
  bytes.set([0x42, 0x4d])
  view.setUint32(2, bytes.byteLength, true)
  view.setUint32(10, offset, true)
  view.setUint32(14, infoSize, true)
  view.setInt32(18, width, true)
  view.setInt32(22, height, true)
  view.setUint16(26, 1, true)
  view.setUint16(28, bits, true)
  view.setUint32(30, compression, true)
  view.setUint32(46, palette.length, true)
  masks?.forEach((mask, i) => view.setUint32(54 + i * 4, mask, true))
  palette.forEach(([r, g, b], i) => bytes.set([b!, g!, r!, 0], 14 + infoSize + extra + i * 4))
  bytes.set(rows, offset)
  return bytes
}

/**
 * BI_RLE8 coding of rows (bottom row first) as the BMP specification lays it out, as Paint writes it: a
 * run of 3 or more equal indices (up to 255) coded, other stretches as literal runs of 3 to 255 indices
 * padded to an even length (1 or 2 left over as runs of one), an end of row after each row, an end of bitmap.
 */
function rle8(rows: Uint8Array[]): number[] {
  const out: number[] = []
  for (const row of rows) {
    let x = 0
    while (x < row.length) {
      let same = 1
      while (x + same < row.length && same < 255 && row[x + same] === row[x]) same++
      if (same >= 3) {
        out.push(same, row[x]!)
        x += same
        continue
      }
      let literal = 0
      while (
        x + literal < row.length &&
        literal < 255 &&
        !(row[x + literal] === row[x + literal + 1] && row[x + literal] === row[x + literal + 2])
      )
        literal++
      if (literal >= 3) {
        out.push(0, literal, ...row.subarray(x, x + literal), ...(literal & 1 ? [0] : []))
        x += literal
      } else {
        out.push(1, row[x]!)
        x++
      }
    }
    out.push(0, 0)
  }
  out.push(0, 1)
  return out
}

describe.skipIf(!available)('BMP decoding', () => {
  it('reads the corpus 8-bit palette skins pixel for pixel and the 24-bit LightWave one', async () => {
    for (const path of [paths.faerie, paths.sydney]) {
      const bytes = new Uint8Array(await readFile(path))
      const image = decodeBmp(bytes)!
      expect([image.width, image.height]).toEqual([
        new DataView(bytes.buffer).getInt32(18, true),
        new DataView(bytes.buffer).getInt32(22, true),
      ])
      for (let y = 0; y < image.height; y += 17) {
        for (let x = 0; x < image.width; x += 13) {
          expect(Array.from(image.data.subarray((y * image.width + x) * 4, (y * image.width + x) * 4 + 4)), `${path} ${x},${y}`).toEqual(
            bmpPixel(bytes, x, y),
          )
        }
      }
    }
    const white = new Uint8Array(await readFile(paths.white))
    // 24-bit BGR: the pixel as stored at the bitmap's offset.
    const at = new DataView(white.buffer).getUint32(10, true)
    expect(Array.from(decodeBmp(white)!.data)).toEqual([white[at + 2], white[at + 1], white[at], 255])
  })

  it('reads 1- and 4-bit palettes, top-down rows, 16-bit 5-6-5 bit fields and 32-bit with alpha', () => {
    const palette = [
      [255, 0, 0],
      [0, 0, 255],
    ]
    // 3 × 2, 1 bit a pixel, bottom-up: the bottom row 0 1 0, the top row 1 1 0.
    const oneBit = decodeBmp(bmp({ width: 3, height: 2, bits: 1, palette, rows: [0b01000000, 0, 0, 0, 0b11000000, 0, 0, 0] }))!
    expect(Array.from(oneBit.data)).toEqual([
      0, 0, 255, 255, 0, 0, 255, 255, 255, 0, 0, 255, 255, 0, 0, 255, 0, 0, 255, 255, 255, 0, 0, 255,
    ])
    // 2 × 1, 4 bits a pixel, top-down (negative height).
    const fourBit = decodeBmp(bmp({ width: 2, height: -1, bits: 4, palette, rows: [0x10, 0, 0, 0] }))!
    expect(Array.from(fourBit.data)).toEqual([0, 0, 255, 255, 255, 0, 0, 255])
    // 5-6-5: full red, then full green.
    const rgb565 = decodeBmp(
      bmp({ width: 2, height: 1, bits: 16, compression: 3, masks: [0xf800, 0x07e0, 0x001f], rows: [0x00, 0xf8, 0xe0, 0x07] }),
    )!
    expect(Array.from(rgb565.data)).toEqual([255, 0, 0, 255, 0, 255, 0, 255])
    // V5 header, BGRA with its alpha mask: a half-transparent blue.
    const rgba = decodeBmp(
      bmp({ width: 1, height: 1, bits: 32, compression: 3, masks: [0xff0000, 0xff00, 0xff, 0xff000000], rows: [200, 10, 20, 128] }),
    )!
    expect(Array.from(rgba.data)).toEqual([20, 10, 200, 128])
  })

  it('reads BI_RLE8 as a real skin coded by the specification: faerie2.bmp run-length coded decodes to the same pixels', async () => {
    const original = new Uint8Array(await readFile(paths.faerie))
    const view = new DataView(original.buffer)
    const [width, height] = [view.getInt32(18, true), view.getInt32(22, true)]
    const paletteAt = 14 + view.getUint32(14, true)
    const palette = Array.from({ length: (view.getUint32(10, true) - paletteAt) / 4 }, (_, i) =>
      [2, 1, 0].map((c) => original[paletteAt + i * 4 + c]!),
    )
    const stride = Math.ceil(width / 4) * 4
    const rows = Array.from({ length: height }, (_, y) => original.subarray(view.getUint32(10, true) + y * stride).subarray(0, width))
    const coded = bmp({ width, height, bits: 8, compression: 1, palette, rows: rle8(rows) })
    expect(coded.byteLength).toBeLessThan(original.byteLength)
    expect(Array.from(decodeBmp(coded)!.data)).toEqual(Array.from(decodeBmp(original)!.data))
  })

  it('reads BI_RLE4 and BI_RLE8 escapes: literal runs with their padding, end of row, a move, end of bitmap; skipped pixels transparent', () => {
    const palette = [
      [0, 0, 0],
      [255, 0, 0],
      [0, 255, 0],
      [0, 0, 255],
    ]
    const [k, r, g, b, _] = [
      [0, 0, 0, 255],
      [255, 0, 0, 255],
      [0, 255, 0, 255],
      [0, 0, 255, 255],
      [0, 0, 0, 0],
    ]
    // 6 × 2, bottom row first: 5 pixels alternating 1 2, end of row; 3 literal nibbles 3 0 2, a move 2 right, one 1, end.
    const four = decodeBmp(
      bmp({ width: 6, height: 2, bits: 4, compression: 2, palette, rows: [5, 0x12, 0, 0, 0, 3, 0x30, 0x20, 0, 2, 2, 0, 1, 0x10, 0, 1] }),
    )!
    expect(Array.from(four.data)).toEqual([b, k, g, _, _, r, r, g, r, g, r, _].flat())
    // 4 × 2: 3 literal indices (padded to 4 bytes), a move 0 right and 1 up, one 2; no end of bitmap (the data ends).
    const eight = decodeBmp(bmp({ width: 4, height: 2, bits: 8, compression: 1, palette, rows: [0, 3, 1, 2, 3, 0, 0, 2, 0, 1, 1, 2] }))!
    expect(Array.from(eight.data)).toEqual([_, _, _, g, r, g, b, _].flat())
    // A run past its row, and an index off the colour table, are damage.
    expect(decodeBmp(bmp({ width: 2, height: 1, bits: 8, compression: 1, palette, rows: [3, 1, 0, 1] }))).toBeUndefined()
    expect(decodeBmp(bmp({ width: 2, height: 1, bits: 8, compression: 1, palette, rows: [2, 9, 0, 1] }))).toBeUndefined()
  })

  it('refuses embedded JPEGs, truncated, oversized and out-of-palette files, which the task note then names by file and kind', () => {
    const jpeg = bmp({ width: 2, height: 1, bits: 0, compression: 4, rows: [0xff, 0xd8, 0xff] })
    expect(decodeBmp(jpeg)).toBeUndefined()
    expect(unusableImageNote('skins/photo.bmp', jpeg)).toBe(
      'texture "skins/photo.bmp" is a BMP of a kind Mos does not decode (holding a JPEG or PNG, OS/2 RLE24, damaged, or over 8192×8192 pixels), which Mos cannot convert to PNG, JPEG, WebP or KTX2; dropped',
    )
    expect(decodeBmp(bmp({ width: 4, height: 4, bits: 24, rows: [1, 2, 3] }))).toBeUndefined()
    // 8193 × 8192 at 1 bit a pixel: 8 MB of file, 268 MB of RGBA.
    expect(decodeBmp(bmp({ width: 8193, height: 8192, bits: 1, palette: [[0, 0, 0]], rows: new Uint8Array(1028 * 8192) }))).toBeUndefined()
    expect(decodeBmp(bmp({ width: 1, height: 1, bits: 8, palette: [[0, 0, 0]], rows: [5, 0, 0, 0] }))).toBeUndefined()
  })

  it('becomes a PNG glTF can hold', async () => {
    const converted = toGltfImage(new Uint8Array(await readFile(paths.faerie)))!
    expect(converted.mimeType).toBe('image/png')
  })
})
