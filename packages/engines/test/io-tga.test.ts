import sharp from 'sharp'
import { describe, expect, it } from 'vitest'
import { encodePng } from '../src/io/png-encode.ts'
import { decodeTga } from '../src/io/tga.ts'

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

  it('refuses what is not a TGA it can read, and truncated data', () => {
    expect(decodeTga(new Uint8Array(10))).toBeUndefined()
    expect(decodeTga(Uint8Array.from([...header(2, 2, 2, 16, 0), 0, 0]))).toBeUndefined() // 16-bit
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
