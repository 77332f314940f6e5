import sharp from 'sharp'
import { describe, expect, it } from 'vitest'
import { checkTextureLimits, ModelInputError, optimizeImage, readImageHeader } from '../src/index.ts'
import { bombPng } from './texture-fixtures.ts'

/** A non-square image so width and height cannot be swapped unnoticed. */
const source = () => sharp({ create: { width: 300, height: 170, channels: 4, background: { r: 10, g: 200, b: 30, alpha: 0.5 } } })

describe('image headers', () => {
  const cases: [string, () => Promise<Buffer>, string][] = [
    ['PNG', () => source().png().toBuffer(), 'png'],
    ['baseline JPEG', () => source().jpeg().toBuffer(), 'jpeg'],
    ['progressive JPEG with EXIF', () => source().withMetadata().jpeg({ progressive: true }).toBuffer(), 'jpeg'],
    ['lossy WebP with alpha (VP8X)', () => source().webp({ quality: 80 }).toBuffer(), 'webp'],
    ['lossy WebP without alpha (VP8)', () => source().removeAlpha().webp({ quality: 80 }).toBuffer(), 'webp'],
    ['lossless WebP (VP8L)', () => source().removeAlpha().webp({ lossless: true }).toBuffer(), 'webp'],
  ]
  for (const [name, make, format] of cases) {
    it(`reads ${name}`, async () => {
      expect(readImageHeader(new Uint8Array(await make()))).toEqual({ format, width: 300, height: 170 })
    })
  }

  it('reads what a bomb declares without decoding it', () => {
    expect(readImageHeader(bombPng(100_000, 90_000))).toEqual({ format: 'png', width: 100_000, height: 90_000 })
  })

  it('says nothing about truncated or foreign bytes', async () => {
    const png = new Uint8Array(await source().png().toBuffer())
    const jpeg = new Uint8Array(await source().jpeg().toBuffer())
    expect(readImageHeader(png.subarray(0, 20))).toBeNull()
    expect(readImageHeader(jpeg.subarray(0, 40))).toBeNull()
    expect(readImageHeader(new TextEncoder().encode('GIF89a not an image we read'))).toBeNull()
    expect(readImageHeader(new Uint8Array(0))).toBeNull()
  })
})

describe('texture limits', () => {
  it('refuses by bytes, then by declared pixels', async () => {
    const png = new Uint8Array(await source().png().toBuffer())
    expect(() => checkTextureLimits(png, { maxTextureBytes: 100 }, 'texture 3 "wood"')).toThrow(
      /^texture 3 "wood" is 0\.\d+ MB, over the texture size limit of 0\.0000954 MB for the current license tier$/,
    )
    expect(() => checkTextureLimits(png, { maxPixels: 300 * 170 - 1 }, 'image')).toThrow(ModelInputError)
    expect(checkTextureLimits(png, { maxPixels: 300 * 170, maxTextureBytes: png.byteLength }, 'image')).toEqual({
      format: 'png',
      width: 300,
      height: 170,
    })
    // A negative limit is the licence's "unlimited".
    expect(checkTextureLimits(png, { maxTextureBytes: -1 }, 'image')?.format).toBe('png')
  })
})

describe('sharp as the second guard', () => {
  it('refuses a format the header reader does not know (a GIF declaring 65535² pixels) before decoding', async () => {
    // GIF89a, 65535 × 65535, global colour table of 2 entries, then an image descriptor of the same size.
    const gif = new Uint8Array([
      ...new TextEncoder().encode('GIF89a'),
      0xff,
      0xff,
      0xff,
      0xff,
      0x80,
      0,
      0,
      0,
      0,
      0,
      0xff,
      0xff,
      0xff,
      0x2c,
      0,
      0,
      0,
      0,
      0xff,
      0xff,
      0xff,
      0xff,
      0,
      0x02,
      0x02,
      0x44,
      0x01,
      0,
      0x3b,
    ])
    expect(readImageHeader(gif)).toBeNull()
    await expect(optimizeImage(gif, { encoder: sharp, format: 'webp' })).rejects.toThrow(
      'image is larger than the pixel limit (refused before decoding)',
    )
  })
})
