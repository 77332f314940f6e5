import { readFile } from 'node:fs/promises'
import sharp from 'sharp'
import { describe, expect, it } from 'vitest'
import { encodePng } from '../src/io/png-encode.ts'
import { decodeTga } from '../src/io/tga.ts'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { tgaPixel } from './support/source-pixels.ts'

const { available, paths } = corpusFiles({ grail: assimp('SMD', 'holygrail.tga') })

/**
 * holygrail.tga (32-bit, with alpha) as a 16-bit TGA by the format's layout: each pixel a little-endian
 * A1R5G5B5 (alpha bit set from 128 up), rows bottom-up or top-down, raw or as RLE packets (a run of
 * equal pixels up to 128, else raw packets up to 128); with the pixels that file holds, quantised.
 */
async function sixteenBitGrail(options: { rle: boolean; topDown: boolean; alphaBits: number }) {
  const source = new Uint8Array(await readFile(paths.grail))
  const [width, height] = [source[12]! | (source[13]! << 8), source[14]! | (source[15]! << 8)]
  const values: number[] = []
  const expected: number[] = []
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const [r, g, b, a] = tgaPixel(source, x, y) as [number, number, number, number]
      const five = (v: number) => Math.round(((v >> 3) * 255) / 31)
      expected.push(five(r), five(g), five(b), options.alphaBits === 1 && a < 128 ? 0 : 255)
    }
  }
  for (let row = 0; row < height; row++) {
    const y = options.topDown ? row : height - 1 - row
    for (let x = 0; x < width; x++) {
      const [r, g, b, a] = tgaPixel(source, x, y) as [number, number, number, number]
      values.push((a >= 128 ? 0x8000 : 0) | ((r >> 3) << 10) | ((g >> 3) << 5) | (b >> 3))
    }
  }
  const le = (v: number) => [v & 255, v >> 8]
  const body: number[] = []
  for (let i = 0; i < values.length; ) {
    if (!options.rle) {
      body.push(...le(values[i++]!))
      continue
    }
    let run = 1
    while (run < 128 && values[i + run] === values[i]) run++
    if (run > 1) {
      body.push(0x80 | (run - 1), ...le(values[i]!))
      i += run
      continue
    }
    // A raw packet stops where a run of equal pixels starts.
    let raw = 1
    while (raw < 128 && i + raw < values.length && values[i + raw] !== values[i + raw + 1]) raw++
    body.push(raw - 1)
    for (let k = 0; k < raw; k++) body.push(...le(values[i + k]!))
    i += raw
  }
  const descriptor = (options.topDown ? 0x20 : 0) | options.alphaBits
  const bytes = Uint8Array.from([...header(options.rle ? 10 : 2, width & 255, height & 255, 16, descriptor), ...body])
  bytes[13] = width >> 8
  bytes[15] = height >> 8
  return { bytes, expected, width, height }
}

/** A TGA header: image type, size, depth, descriptor, optional colour map. */
function header(
  type: number,
  width: number,
  height: number,
  depth: number,
  descriptor: number,
  map?: { length: number; depth: number },
): number[] {
  return [0, map ? 1 : 0, type, 0, 0, map?.length ?? 0, 0, map?.depth ?? 0, 0, 0, 0, 0, width, 0, height, 0, depth, descriptor]
}

// 2 × 2 pixels, top row red then green, bottom row blue then white (RGBA).
const EXPECTED = [255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 255, 255, 255, 255]

describe('TGA decoding', () => {
  it('reads raw 24-bit, rows bottom-up, BGR', () => {
    const bytes = Uint8Array.from([...header(2, 2, 2, 24, 0), 255, 0, 0, 255, 255, 255, 0, 0, 255, 0, 255, 0])
    expect(Array.from(decodeTga(bytes)!.data)).toEqual(EXPECTED)
  })

  it('reads RLE 32-bit, rows top-down, with alpha', () => {
    // one run of 2 pixels isn't possible here (they differ): raw packet of 2, then run of 1, then raw of 1
    const bytes = Uint8Array.from([
      ...header(10, 2, 2, 32, 0x20),
      0x01,
      0,
      0,
      255,
      128,
      0,
      255,
      0,
      128, // raw packet: 2 pixels
      0x80,
      255,
      0,
      0,
      128, // run packet: 1 pixel
      0x00,
      255,
      255,
      255,
      128, // raw packet: 1 pixel
    ])
    expect(Array.from(decodeTga(bytes)!.data)).toEqual(EXPECTED.map((v, i) => (i % 4 === 3 ? 128 : v)))
  })

  it('reads grey and colour-mapped images', () => {
    const grey = decodeTga(Uint8Array.from([...header(3, 2, 1, 8, 0x20), 10, 200]))!
    expect(Array.from(grey.data)).toEqual([10, 10, 10, 255, 200, 200, 200, 255])
    const mapped = decodeTga(Uint8Array.from([...header(1, 2, 1, 8, 0x20, { length: 2, depth: 24 }), 0, 0, 255, 255, 0, 0, 1, 0]))!
    expect(Array.from(mapped.data)).toEqual([0, 0, 255, 255, 255, 0, 0, 255])
  })

  it.skipIf(!available)(
    'reads 16-bit A1R5G5B5 (raw and RLE, either origin; the alpha bit where the descriptor says so) as holygrail.tga written so',
    async () => {
      for (const options of [
        { rle: false, topDown: false, alphaBits: 1 },
        { rle: true, topDown: true, alphaBits: 1 },
        { rle: true, topDown: false, alphaBits: 0 },
      ]) {
        const { bytes, expected, width, height } = await sixteenBitGrail(options)
        const image = decodeTga(bytes)
        expect([image?.width, image?.height], JSON.stringify(options)).toEqual([width, height])
        // The first pixel that differs, if any (a deep equal of a million numbers took seconds).
        const differs = expected.findIndex((v, i) => image!.data[i] !== v)
        expect(differs, `${JSON.stringify(options)} at byte ${differs}`).toBe(-1)
      }
      // A colour map of 16-bit entries: index 1 is pure red, opaque by the alpha bit.
      const mapped = decodeTga(Uint8Array.from([...header(1, 1, 1, 8, 0x01, { length: 2, depth: 16 }), 0, 0, 0x00, 0xfc, 1]))
      expect(Array.from(mapped!.data)).toEqual([255, 0, 0, 255])
    },
  )

  it('refuses what is not a TGA it can read, and truncated data', () => {
    expect(decodeTga(new Uint8Array(10))).toBeUndefined()
    expect(decodeTga(Uint8Array.from([...header(2, 2, 2, 16, 0), 0, 0]))).toBeUndefined() // 16-bit, 2 of its 8 bytes
    expect(decodeTga(Uint8Array.from([...header(2, 1, 1, 12, 0), 0, 0]))).toBeUndefined() // no such depth
    expect(decodeTga(Uint8Array.from([...header(2, 2, 2, 24, 0), 255, 0, 0]))).toBeUndefined()
    expect(decodeTga(Uint8Array.from([...header(10, 2, 2, 24, 0), 0xff, 1, 2, 3]))).toBeUndefined() // run past the image
  })

  it('refuses an RLE image declaring more pixels than the texture limit, before it allocates them', () => {
    // 8960 × 8960 pixels in 2.5 MB of 128-pixel runs: 321 MB of RGBA had it been decoded (16384² took 1 GB).
    const side = 8960
    const runs = Math.ceil((side * side) / 128)
    const bytes = new Uint8Array(18 + runs * 4)
    bytes.set([0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, side & 255, side >> 8, side & 255, side >> 8, 24, 0x20])
    for (let run = 0; run < runs; run++) bytes.set([0xff, 10, 20, 30], 18 + run * 4)
    expect(decodeTga(bytes)).toBeUndefined()
    // Within the limit, the same runs decode.
    const small = Uint8Array.from([...header(10, 16, 8, 24, 0x20), 0xff, 10, 20, 30])
    expect(Array.from(decodeTga(small)!.data.subarray(0, 4))).toEqual([30, 20, 10, 255])
  })

  it('encodes PNGs that sharp reads back pixel for pixel', async () => {
    const png = encodePng({ width: 2, height: 2, data: Uint8Array.from(EXPECTED) })
    const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true })
    expect([info.width, info.height, info.channels]).toEqual([2, 2, 4])
    expect(Array.from(data)).toEqual(EXPECTED)
  })
})
