import { describe, expect, it } from 'vitest'
import { decodeDds, undecodedDds } from '../src/io/dds.ts'
import { toGltfImage, unusableImageNote } from '../src/io/image-files.ts'
import type { RgbaImage } from '../src/io/tga.ts'
import { basisDecoded, ddsFile, flatBc1Block, uastcAsBc7 } from './support/dds-files.ts'
import { blockTestImage, imageMagickFile, pixelError } from './support/image-magick.ts'

/** Deterministic bytes (a linear congruential generator), for blocks of every BC7 mode, partition and rotation. */
function noise(length: number, seed: number): Uint8Array {
  let state = seed
  return Uint8Array.from({ length }, () => ((state = (state * 1103515245 + 12345) >>> 0) >>> 16) & 255)
}

const FLAT = (x: number) => x < 32

/** Each 4 × 4 block of the test image's flat columns decodes to one colour, within a level of the block's own. */
function expectFlatBlocks(decoded: RgbaImage, source: RgbaImage): void {
  expect(pixelError(decoded, source, FLAT).max).toBeLessThanOrEqual(1)
  for (let y = 0; y < source.height; y++)
    for (let x = 0; x < 32; x++) {
      const [o, corner] = [(y * source.width + x) * 4, ((y & ~3) * source.width + (x & ~3)) * 4]
      expect(Array.from(decoded.data.subarray(o, o + 4)), `${x},${y}`).toEqual(Array.from(decoded.data.subarray(corner, corner + 4)))
    }
}

describe('DDS decoding', () => {
  it('reads ImageMagick DXT1, DXT5 and uncompressed files of 70 × 38 pixels: flat blocks flat, gradients within BC error', async () => {
    const image = blockTestImage()
    const opaque = blockTestImage(70, 38, { opaque: true })
    const none = decodeDds(await imageMagickFile(image, ['-define', 'dds:compression=none'], 'dds'))!
    expect(pixelError(none, image)).toEqual({ mean: 0, max: 0 })
    const dxt5File = await imageMagickFile(image, ['-define', 'dds:compression=dxt5'], 'dds')
    expect(String.fromCharCode(...dxt5File.subarray(84, 88))).toBe('DXT5')
    const dxt5 = decodeDds(dxt5File)!
    expect([dxt5.width, dxt5.height]).toEqual([70, 38])
    // ImageMagick's cluster fit does not pick a flat block's own colour as an end point: measured 1 level off at most.
    expectFlatBlocks(dxt5, image)
    const dxt5Error = pixelError(dxt5, image, (x) => !FLAT(x))
    expect(dxt5Error.mean).toBeLessThan(3)
    expect(dxt5Error.max).toBeLessThan(24)
    const dxt1 = decodeDds(await imageMagickFile(opaque, ['-define', 'dds:compression=dxt1'], 'dds'))!
    expectFlatBlocks(dxt1, opaque)
    const dxt1Error = pixelError(dxt1, opaque, (x) => !FLAT(x))
    expect(dxt1Error.mean).toBeLessThan(3)
    expect(dxt1Error.max).toBeLessThan(24)
  })

  it('mip maps after the top level are skipped; BC1 keeps its 1-bit alpha', async () => {
    const image = blockTestImage(64, 32)
    const file = await imageMagickFile(image, ['-define', 'dds:compression=dxt5', '-define', 'dds:mipmaps=5'], 'dds')
    expect(new DataView(file.buffer).getUint32(28, true)).toBe(6)
    const decoded = decodeDds(file)!
    expect([decoded.width, decoded.height, decoded.note]).toEqual([64, 32, undefined])
    expect(pixelError(decoded, image).mean).toBeLessThan(3)
    // ImageMagick 6 writes DXT1 opaque: a block in three-colour mode (first end point not above the second), index 3 transparent black.
    const block = [0x00, 0xf8, 0x00, 0xf8, 0b11100100, 0, 0, 0]
    const pixels = Array.from(decodeDds(ddsFile({ width: 4, height: 1, fourCc: 'DXT1' }, Uint8Array.from(block)))!.data)
    expect(pixels).toEqual([255, 0, 0, 255, 255, 0, 0, 255, 255, 0, 0, 255, 0, 0, 0, 0])
  })

  it('BC7 blocks of all eight modes (and BC1–BC5) decode as Binomial transcoder decodes the same DX10 file', async () => {
    const blocks = noise(16 * 8 * 64, 7)
    // Every block a mode: mode m is m zero bits then a one, the rest of its bits any.
    for (let b = 0; b < blocks.length / 16; b++) blocks[b * 16] = (blocks[b * 16]! & ~((2 << (b % 8)) - 1) & 255) | (1 << (b % 8))
    const bc7 = ddsFile({ width: 61, height: 62, dxgi: 98 }, blocks.subarray(0, 16 * 16 * 16))
    expect(pixelError(decodeDds(bc7)!, await basisDecoded(bc7))).toEqual({ mean: 0, max: 0 })
    // BC1–BC5 interpolate with rounding that GPUs and decoders differ on by 1–2 levels; BC4 and BC5 store red and green only.
    for (const [dxgi, blockBytes, channels, most] of [
      [71, 8, [0, 1, 2, 3], 2],
      [74, 16, [0, 1, 2, 3], 2],
      [77, 16, [0, 1, 2, 3], 2],
      [80, 8, [0], 1],
      [83, 16, [0, 1], 1],
    ] as const) {
      const file = ddsFile({ width: 64, height: 64, dxgi }, noise(256 * blockBytes, dxgi))
      expect(pixelError(decodeDds(file)!, await basisDecoded(file), () => true, [...channels]).max, `DXGI ${dxgi}`).toBeLessThanOrEqual(
        most,
      )
    }
  })

  it('BC7 of a real image: UASTC transcoded to BC7 by Binomial, in a DX10 header, decodes to the transcoder RGBA32 of the same image', async () => {
    const image = blockTestImage()
    const { blocks, rgba } = await uastcAsBc7(image)
    for (const dxgi of [98, 99]) {
      const decoded = decodeDds(ddsFile({ width: 70, height: 38, dxgi }, blocks))!
      // UASTC → BC7 (here modes 5 and 6) is not bit-exact with UASTC's own decoding: measured max 1, mean 0.17 (0.58 from the source).
      const error = pixelError(decoded, rgba)
      expect(error.max).toBeLessThanOrEqual(1)
      expect(error.mean).toBeLessThan(0.3)
      expect(pixelError(decoded, image).mean).toBeLessThan(1)
    }
  })

  it('BC5 is a normal map: blue rebuilt from red and green, told in the note', () => {
    // Red 255 everywhere (x = 1) and green 128 (y ≈ 0): z = 0, blue 128; red and green 128: z = 1, blue 255.
    const channel = (v: number) => [v, v, 0, 0, 0, 0, 0, 0]
    const file = ddsFile(
      { width: 8, height: 4, fourCc: 'ATI2' },
      Uint8Array.from([...channel(255), ...channel(128), ...channel(128), ...channel(128)]),
    )
    const decoded = decodeDds(file)!
    expect(Array.from(decoded.data.subarray(0, 4))).toEqual([255, 128, 128, 255])
    expect(Array.from(decoded.data.subarray(16, 20))).toEqual([128, 128, 255, 255])
    expect(decoded.note).toBe('is a two-channel (BC5) normal map: kept as a PNG, its blue channel rebuilt as sqrt(1 − x² − y²)')
  })

  it('DXT2 and DXT4 are premultiplied: colour divided by alpha', () => {
    // Alpha 128 everywhere (both end points); colour red 5-bit 12 (99 of 255), premultiplied.
    const alpha = [128, 128, 0, 0, 0, 0, 0, 0]
    const dxt4 = decodeDds(ddsFile({ width: 4, height: 4, fourCc: 'DXT4' }, Uint8Array.from([...alpha, ...flatBc1Block(12 << 11)])))!
    const red = Math.round((((12 * 527 + 23) >> 6) * 255) / 128)
    expect(
      Array.from(
        decodeDds(ddsFile({ width: 4, height: 4, fourCc: 'DXT5' }, Uint8Array.from([...alpha, ...flatBc1Block(12 << 11)])))!.data.subarray(
          0,
          4,
        ),
      ),
    ).toEqual([99, 0, 0, 128])
    expect(Array.from(dxt4.data.subarray(0, 4))).toEqual([red, 0, 0, 128])
  })

  it('uncompressed pixels by their masks: 16-bit 565, 24-bit BGR, luminance, luminance-alpha, alpha, and DX10 RGBA and BGRX', () => {
    const one = (options: Parameters<typeof ddsFile>[0], pixel: number[]) =>
      Array.from(decodeDds(ddsFile({ ...options, width: 1, height: 1 }, Uint8Array.from(pixel)))!.data)
    expect(one({ width: 1, height: 1, bits: 16, masks: [0xf800, 0x7e0, 0x1f, 0] }, [0x1f, 0xf8])).toEqual([255, 0, 255, 255])
    expect(one({ width: 1, height: 1, bits: 24, masks: [0xff0000, 0xff00, 0xff, 0] }, [1, 2, 3])).toEqual([3, 2, 1, 255])
    expect(one({ width: 1, height: 1, bits: 8, pixelFlags: 0x20000, masks: [0xff, 0, 0, 0] }, [77])).toEqual([77, 77, 77, 255])
    expect(one({ width: 1, height: 1, bits: 16, pixelFlags: 0x20001, masks: [0xff, 0, 0, 0xff00] }, [77, 9])).toEqual([77, 77, 77, 9])
    expect(one({ width: 1, height: 1, bits: 8, pixelFlags: 0x2, masks: [0, 0, 0, 0xff] }, [9])).toEqual([0, 0, 0, 9])
    expect(one({ width: 1, height: 1, dxgi: 28 }, [1, 2, 3, 4])).toEqual([1, 2, 3, 4])
    expect(one({ width: 1, height: 1, dxgi: 88 }, [1, 2, 3, 4])).toEqual([3, 2, 1, 255])
  })

  it('a cube map, an array and a volume keep their first image, and the note says what was not kept', () => {
    const red = flatBc1Block(0xf800)
    const green = flatBc1Block(0x07e0)
    const faces = Uint8Array.from([...red, ...green, ...green, ...green, ...green, ...green])
    const cube = decodeDds(ddsFile({ width: 4, height: 4, fourCc: 'DXT1', caps2: 0x200 | 0xfc00 }, faces))!
    expect([...cube.data.subarray(0, 4), cube.note]).toEqual([
      255,
      0,
      0,
      255,
      'is a DDS cube map of 6 faces: its first face (+X) is kept, as a PNG',
    ])
    const array = decodeDds(ddsFile({ width: 4, height: 4, dxgi: 71, arraySize: 3 }, faces))!
    expect(array.note).toBe('is a DDS texture array of 3 images: its first image is kept, as a PNG')
    expect(decodeDds(ddsFile({ width: 4, height: 4, dxgi: 71, miscFlag: 4 }, faces))!.note).toMatch(/cube map of 6 faces/)
    const volume = decodeDds(ddsFile({ width: 4, height: 4, fourCc: 'DXT1', caps2: 0x200000, depth: 4 }, faces))!
    expect(volume.note).toBe('is a DDS volume texture of 4 slices: its first slice is kept, as a PNG')
    expect(toGltfImage(ddsFile({ width: 4, height: 4, fourCc: 'DXT1', caps2: 0x200 | 0xfc00 }, faces))?.note).toBe(cube.note)
  })

  it('HDR, signed and unknown formats are named; hostile and cut-short headers are damaged, never a throw or a large allocation', async () => {
    const note = (bytes: Uint8Array) => unusableImageNote('t.dds', bytes)
    const cannot = 'which Mos cannot convert to PNG, JPEG, WebP or KTX2; dropped'
    const couldNot = 'which Mos could not decode (damaged, or over 8192×8192 pixels); dropped'
    expect(note(ddsFile({ width: 4, height: 4, dxgi: 95 }, new Uint8Array(16)))).toBe(
      `texture "t.dds" is a DDS image in BC6H (HDR), ${cannot}`,
    )
    expect(note(ddsFile({ width: 4, height: 4, fourCc: 113 }, new Uint8Array(128)))).toBe(
      `texture "t.dds" is a DDS image of floating-point pixels (HDR), ${cannot}`,
    )
    expect(note(ddsFile({ width: 4, height: 4, dxgi: 10 }))).toMatch(/floating-point pixels \(HDR\)/)
    expect(note(ddsFile({ width: 4, height: 4, dxgi: 84 }))).toMatch(/signed \(SNORM\) channels/)
    expect(note(ddsFile({ width: 4, height: 4, fourCc: 'UYVY' }))).toBe(`texture "t.dds" is a DDS image in the format "UYVY", ${cannot}`)
    const hostile = [
      ddsFile({ width: 0x10000, height: 0x10000, fourCc: 'DXT1' }, new Uint8Array(8)),
      ddsFile({ width: 8192, height: 8192, dxgi: 28 }, new Uint8Array(64)),
      ddsFile({ width: 4, height: 4, fourCc: 'DXT1', mipMaps: 0xffffffff }, new Uint8Array(4)),
      (await imageMagickFile(blockTestImage(), ['-define', 'dds:compression=dxt5'], 'dds')).subarray(0, 700),
      new TextEncoder().encode('DDS '),
    ]
    for (const bytes of hostile) {
      expect(decodeDds(bytes)).toBeUndefined()
      expect(toGltfImage(bytes)).toBeUndefined()
      expect(note(bytes)).toBe(`texture "t.dds" is a DDS image, ${couldNot}`)
    }
    expect(undecodedDds(ddsFile({ width: 4, height: 4, fourCc: 'DXT1' }, new Uint8Array(8)))).toBeUndefined()
    // Counts the decoder never allocates by: only named in the note.
    const deep = decodeDds(
      ddsFile({ width: 4, height: 4, fourCc: 'DXT1', mipMaps: 0xffffffff, caps2: 0x200000, depth: 0xffffffff }, new Uint8Array(8)),
    )
    expect(deep?.note).toBe('is a DDS volume texture of 4294967295 slices: its first slice is kept, as a PNG')
    expect(decodeDds(ddsFile({ width: 4, height: 4, dxgi: 98, arraySize: 0xffffffff }, new Uint8Array(16)))?.note).toMatch(
      /array of 4294967295 images/,
    )
  })
})
