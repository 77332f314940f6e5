import { describe, expect, it } from 'vitest'
import { toGltfImage, unusableImageNote } from '../src/io/image-files.ts'
import { decodePsd } from '../src/io/psd.ts'
import type { RgbaImage } from '../src/io/tga.ts'
import { blockTestImage, imageMagickFile, pixelError } from './support/image-magick.ts'

/** The test image as Photoshop stores a flattened image with transparent layers: colours laid over white, alpha beside them. */
function overWhite(image: RgbaImage): RgbaImage {
  const data = Uint8Array.from(image.data, (v, i) => {
    const alpha = image.data[i - (i % 4) + 3]!
    return i % 4 === 3 ? v : Math.round((v * alpha) / 255 + 255 - alpha)
  })
  return { ...image, data }
}

/** The largest difference of colour scaled by the source's alpha (what shows once composited), and of alpha itself. */
function shownError(decoded: RgbaImage, source: RgbaImage): { colour: number; alpha: number } {
  let [colour, alpha] = [0, 0]
  for (let o = 0; o < source.data.length; o += 4) {
    const a = source.data[o + 3]!
    for (let c = 0; c < 3; c++) colour = Math.max(colour, (Math.abs(decoded.data[o + c]! - source.data[o + c]!) * a) / 255)
    alpha = Math.max(alpha, Math.abs(decoded.data[o + 3]! - a))
  }
  return { colour, alpha }
}

/** Where the image data section starts: after the header and the three length-prefixed sections (PSD, version 1). */
function imageDataOffset(psd: Uint8Array): number {
  const view = new DataView(psd.buffer, psd.byteOffset, psd.byteLength)
  let at = 26
  for (let i = 0; i < 3; i++) at += 4 + view.getUint32(at)
  return at
}

describe('PSD decoding', () => {
  it('reads ImageMagick RGB PSDs (and a PSB) with alpha, raw and RLE, 8- and 16-bit: alpha exact, colours unmatted from white', async () => {
    const image = blockTestImage()
    for (const [args, compression, depth] of [
      [['-compress', 'none'], 0, 8],
      [['-compress', 'rle'], 1, 8],
      [['-depth', '16', '-compress', 'none'], 0, 16],
      [['-depth', '16', '-compress', 'rle'], 1, 16],
    ] as const) {
      const psd = await imageMagickFile(overWhite(image), [...args], 'psd')
      const view = new DataView(psd.buffer)
      expect([view.getUint16(12), view.getUint16(22), view.getUint16(24), view.getUint16(imageDataOffset(psd))]).toEqual([
        4,
        depth,
        3,
        compression,
      ])
      const decoded = decodePsd(psd)!
      expect([decoded.width, decoded.height]).toEqual([70, 38])
      // Over white, a colour keeps alpha/255 of its precision: within one level once shown.
      const error = shownError(decoded, image)
      expect(error.alpha, args.join(' ')).toBe(0)
      expect(error.colour, args.join(' ')).toBeLessThanOrEqual(1)
      expect(pixelError(decoded, image, (x) => x < 32)).toEqual({ mean: 0, max: 0 })
    }
    // PSB (version 2): 8-byte section lengths, 4-byte RLE row lengths.
    const psb = await imageMagickFile(overWhite(image), ['-depth', '16', '-compress', 'rle'], 'psb')
    expect(new DataView(psb.buffer).getUint16(4)).toBe(2)
    const fromPsb = shownError(decodePsd(psb)!, image)
    expect(fromPsb.alpha).toBe(0)
    expect(fromPsb.colour).toBeLessThanOrEqual(1)
  })

  it('a flat PSD (no layers) with an alpha channel: alpha kept, colours as stored (Photoshop lays only layers over white)', async () => {
    const image = overWhite(blockTestImage())
    const layered = await imageMagickFile(image, ['-compress', 'rle'], 'psd')
    // ImageMagick writes a layer section (one layer, its count negative): the same file without it.
    const view = new DataView(layered.buffer)
    let layers = 26
    for (let i = 0; i < 2; i++) layers += 4 + view.getUint32(layers)
    expect(view.getInt16(layers + 8)).toBe(-1)
    const flat = Uint8Array.from([...layered.subarray(0, layers), 0, 0, 0, 0, ...layered.subarray(layers + 4 + view.getUint32(layers))])
    expect(pixelError(decodePsd(flat)!, image)).toEqual({ mean: 0, max: 0 })
  })

  it('opaque RGB, grey (8- and 16-bit) and CMYK: every pixel, as ImageMagick wrote it', async () => {
    const opaque = blockTestImage(70, 38, { opaque: true })
    const rgb = decodePsd(await imageMagickFile(opaque, ['-alpha', 'off', '-compress', 'rle'], 'psd'))!
    expect(pixelError(rgb, opaque)).toEqual({ mean: 0, max: 0 })
    const grey = {
      ...opaque,
      data: Uint8Array.from({ length: opaque.data.length }, (_, i) => (i % 4 === 3 ? 255 : opaque.data[i - (i % 4)]!)),
    }
    for (const depth of ['8', '16']) {
      const file = await imageMagickFile(grey, ['-alpha', 'off', '-colorspace', 'Gray', '-depth', depth], 'psd')
      expect(new DataView(file.buffer).getUint16(24)).toBe(1)
      expect(pixelError(decodePsd(file)!, grey).max).toBeLessThanOrEqual(1)
    }
    // ImageMagick converts to CMYK without a profile (C = 1 − R, K = min), which the ink values undo: a level or two of rounding.
    const cmyk = await imageMagickFile(opaque, ['-alpha', 'off', '-colorspace', 'CMYK'], 'psd')
    expect(new DataView(cmyk.buffer).getUint16(24)).toBe(4)
    expect(pixelError(decodePsd(cmyk)!, opaque).max).toBeLessThanOrEqual(2)
  })

  it('indexed and bitmap images: colour table and 1-bit pixels', async () => {
    const image = blockTestImage(32, 12, { opaque: true })
    const indexed = await imageMagickFile(image, ['-alpha', 'off', '-type', 'Palette'], 'psd')
    expect(new DataView(indexed.buffer).getUint16(24)).toBe(2)
    expect(pixelError(decodePsd(indexed)!, image)).toEqual({ mean: 0, max: 0 })
    // A 10 × 1 bitmap (mode 0, 1 bit), raw: 1 is black.
    const bitmap = Uint8Array.from([...psdHeader({ width: 10, height: 1, channels: 1, depth: 1, mode: 0 }), 0, 0, 0b10100000, 0b01000000])
    const pixels = Array.from(decodePsd(bitmap)!.data.filter((_, i) => i % 4 === 0))
    expect(pixels).toEqual([0, 255, 0, 255, 255, 255, 255, 255, 255, 0])
  })

  it('Lab, multichannel, 32-bit and ZIP-compressed flattened images are named; hostile and cut-short files are damaged', async () => {
    const note = (bytes: Uint8Array) => unusableImageNote('t.psd', bytes)
    const cannot = 'which Mos cannot convert to PNG, JPEG, WebP or KTX2; dropped'
    const couldNot = 'which Mos could not decode (damaged, or over 8192×8192 pixels); dropped'
    expect(note(Uint8Array.from(psdHeader({ width: 1, height: 1, channels: 3, depth: 8, mode: 9 })))).toBe(
      `texture "t.psd" is a Photoshop (PSD) image in Lab colour, ${cannot}`,
    )
    expect(note(Uint8Array.from(psdHeader({ width: 1, height: 1, channels: 3, depth: 8, mode: 7 })))).toMatch(/in multichannel, which/)
    expect(note(Uint8Array.from(psdHeader({ width: 1, height: 1, channels: 3, depth: 32, mode: 3 })))).toMatch(
      /32-bit floating-point channels \(HDR\)/,
    )
    expect(note(Uint8Array.from([...psdHeader({ width: 1, height: 1, channels: 3, depth: 8, mode: 3 }), 0, 2, 1, 2, 3]))).toMatch(
      /ZIP-compressed/,
    )
    const rle = await imageMagickFile(blockTestImage(), ['-compress', 'rle'], 'psd')
    const rows = imageDataOffset(rle) + 2
    const pastEnd = rle.slice()
    pastEnd.set([0xff, 0xff], rows)
    const overrun = rle.slice()
    // A row's first packet repeating 128 bytes where the row holds 70: a run past the row's end.
    overrun[rows + 2 * 4 * 38] = 0x81
    const hostile = [
      pastEnd,
      overrun,
      rle.subarray(0, rle.byteLength - 50),
      Uint8Array.from([...psdHeader({ width: 30000, height: 30000, channels: 3, depth: 8, mode: 3 }), 0, 1]),
      Uint8Array.from([...psdHeader({ width: 8192, height: 8192, channels: 65535, depth: 8, mode: 3 }), 0, 1, 0, 2]),
      Uint8Array.from([...psdHeader({ width: 8192, height: 8192, channels: 3, depth: 16, mode: 3 }), 0, 0, 1, 2]),
      new TextEncoder().encode('8BPS'),
    ]
    for (const bytes of hostile) {
      expect(decodePsd(bytes)).toBeUndefined()
      expect(toGltfImage(bytes)).toBeUndefined()
      expect(note(bytes)).toBe(`texture "t.psd" is a Photoshop (PSD) image, ${couldNot}`)
    }
    expect(decodePsd(rle)).toBeDefined()
  })
})

/** The 26-byte header of a version 1 PSD and three empty sections (colour mode data, resources, layers): the image data comes next. */
function psdHeader(h: { width: number; height: number; channels: number; depth: number; mode: number }): number[] {
  const u16 = (v: number) => [v >> 8, v & 255]
  const u32 = (v: number) => [v >>> 24, (v >> 16) & 255, (v >> 8) & 255, v & 255]
  return [
    ...[0x38, 0x42, 0x50, 0x53],
    ...u16(1),
    0,
    0,
    0,
    0,
    0,
    0,
    ...u16(h.channels),
    ...u32(h.height),
    ...u32(h.width),
    ...u16(h.depth),
    ...u16(h.mode),
    ...u32(0),
    ...u32(0),
    ...u32(0),
  ]
}
