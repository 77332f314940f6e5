import { Document } from '@gltf-transform/core'
import sharp from 'sharp'
import { afterAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { createEnginePool, loadPlatform } from '../src/index.ts'
import { encodeSmallestPng } from '../src/io/png-smallest.ts'
import { repackPngTextures } from '../src/ops/png-repack.ts'
import { compressFileWith } from './support/compress-file.ts'
import { bombPng } from './texture-fixtures.ts'
import { noise } from './support/noise.ts'

/** A PNG's pixels as sharp decodes them, four channels whatever the PNG stores. */
async function rgbaOf(png: Uint8Array): Promise<Buffer> {
  return sharp(png).toColourspace('srgb').ensureAlpha().raw().toBuffer()
}

/**
 * Both decode to the same RGBA, byte for byte (Buffer.equals: vitest's deep equality walks a
 * megabyte of pixels one index at a time); a failure names the first pixel that differs.
 */
async function expectSamePixels(png: Uint8Array, pixels: Uint8Array, label = 'pixels'): Promise<void> {
  const decoded = await rgbaOf(png)
  const first = decoded.findIndex((byte, i) => byte !== pixels[i])
  expect(decoded.byteLength === pixels.byteLength && first === -1, `${label}: byte ${first} differs`).toBe(true)
}

/** IHDR's bit depth and colour type (bytes 24 and 25 of every PNG). */
function storage(png: Uint8Array): { bitDepth: number; colourType: number } {
  return { bitDepth: png[24]!, colourType: png[25]! }
}

/** width × height RGBA pixels from a function of the pixel's coordinates. */
function image(width: number, height: number, pixel: (x: number, y: number) => [number, number, number, number]) {
  const data = new Uint8Array(width * height * 4)
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) data.set(pixel(x, y), (y * width + x) * 4)
  return { width, height, data }
}

describe('encodeSmallestPng: the smallest PNG of exactly the pixels given', () => {
  it('stores two opaque colours as a 1-bit indexed image', async () => {
    const stripes = image(37, 19, (x) => (x % 3 === 0 ? [200, 10, 30, 255] : [0, 90, 250, 255]))
    const png = await encodeSmallestPng(stripes)
    expect(storage(png)).toEqual({ bitDepth: 1, colourType: 3 })
    await expectSamePixels(png, stripes.data)
  })

  it('keeps every translucent palette colour, and the colour under a fully transparent pixel', async () => {
    // Ten colours, some translucent and some transparent with different RGB (bilinear filtering reads them).
    const colours: [number, number, number, number][] = Array.from({ length: 10 }, (_, i) => [
      i * 25,
      255 - i * 20,
      i * 7,
      i % 3 === 0 ? 0 : i % 3 === 1 ? 128 : 255,
    ])
    const picture = image(50, 40, (x, y) => colours[(x * 7 + y * 3) % 10]!)
    const png = await encodeSmallestPng(picture)
    expect(storage(png)).toEqual({ bitDepth: 4, colourType: 3 })
    await expectSamePixels(png, picture.data)
  })

  it('stores grey with alpha as grey and alpha, many colours as direct samples, each exact', async () => {
    const ramp = image(300, 40, (x, y) => [x % 256, x % 256, x % 256, (y * 6) % 256])
    const rampPng = await encodeSmallestPng(ramp)
    expect(storage(rampPng).colourType).toBe(4)
    await expectSamePixels(rampPng, ramp.data)

    const bytes = noise(64 * 48 * 4)
    for (let i = 3; i < bytes.length; i += 4) bytes[i] = 255 // opaque: no alpha channel is written
    const photo = { width: 64, height: 48, data: bytes }
    const photoPng = await encodeSmallestPng(photo)
    expect(storage(photoPng)).toEqual({ bitDepth: 8, colourType: 2 })
    await expectSamePixels(photoPng, bytes)
  })

  it('stores a 255-colour ramp as direct samples, where its palette would outweigh what its indices save', async () => {
    const ramp = image(255, 1, (x) => [255 - x, 128, x, 255])
    const png = await encodeSmallestPng(ramp)
    expect(storage(png)).toEqual({ bitDepth: 8, colourType: 2 })
    expect(png.byteLength).toBeLessThan(255 * 3) // the palette alone would be 765 bytes
    await expectSamePixels(png, ramp.data)
  })

  it('indexes 256 colours at 8 bits, and stores the image with a 257th colour as direct samples', async () => {
    // 256 opaque colours (words above 2^31), one per pixel at random, each used: indices are a third of RGB's bytes.
    const colour = (n: number): [number, number, number, number] => [(n * 37) & 0xff, (n * 101 + 7) & 0xff, n, 255]
    const picks = noise(64 * 64, 5)
    const picture = (extra: boolean) =>
      image(64, 64, (x, y) => (extra && x === 63 && y === 63 ? [1, 2, 3, 255] : colour(y * 64 + x < 256 ? y * 64 + x : picks[y * 64 + x]!)))
    const full = picture(false)
    const png = await encodeSmallestPng(full)
    expect(storage(png)).toEqual({ bitDepth: 8, colourType: 3 })
    await expectSamePixels(png, full.data)
    const over = picture(true)
    const direct = await encodeSmallestPng(over)
    expect(storage(direct).colourType).toBe(2)
    await expectSamePixels(direct, over.data)
  })

  it('takes the pixels at any byte offset (a view into a larger buffer)', async () => {
    const backing = new Uint8Array(3 + 16 * 16 * 4)
    backing.set(noise(16 * 16 * 4, 3), 3)
    const data = backing.subarray(3)
    await expectSamePixels(await encodeSmallestPng({ width: 16, height: 16, data }), data)
  })
})

describe('repackPngTextures: PNG textures re-packed where that is smaller and changes no pixel', () => {
  /** A document with one texture per image given, each on a material of its own. */
  function docWithImages(images: { bytes: Uint8Array; mimeType: string }[]): Document {
    const doc = new Document()
    for (const [i, { bytes, mimeType }] of images.entries()) {
      const texture = doc.createTexture(`t${i}`).setImage(bytes).setMimeType(mimeType)
      doc.createMaterial().setBaseColorTexture(texture)
    }
    return doc
  }

  it('re-packs a loosely packed PNG and reports it; leaves JPEG, a PNG with an ICC profile, 16-bit, corrupt and oversized PNGs alone', async () => {
    const raw = image(128, 128, (x, y) => [(x >> 4) * 30, (y >> 4) * 30, 90, 255])
    const rawInput = { raw: { width: 128, height: 128, channels: 4 as const } }
    const loose = new Uint8Array(await sharp(raw.data, rawInput).png({ compressionLevel: 0 }).toBuffer())
    const jpeg = new Uint8Array(await sharp(raw.data, rawInput).jpeg().toBuffer())
    const profiled = new Uint8Array(await sharp(raw.data, rawInput).withIccProfile('p3').png({ compressionLevel: 0 }).toBuffer())
    const deep = new Uint8Array(await sharp(raw.data, rawInput).toColourspace('rgb16').png({ compressionLevel: 0 }).toBuffer())
    const corrupt = loose.slice(0, 200)
    const images = [
      { bytes: loose, mimeType: 'image/png' },
      { bytes: jpeg, mimeType: 'image/jpeg' },
      { bytes: profiled, mimeType: 'image/png' },
      { bytes: deep, mimeType: 'image/png' },
      { bytes: corrupt, mimeType: 'image/png' },
      { bytes: bombPng(5000, 5000), mimeType: 'image/png' },
    ]
    const doc = docWithImages(images)
    const reports = await repackPngTextures(doc, { sharp, concurrency: 2 })
    const textures = doc.getRoot().listTextures()
    expect(reports).toEqual([
      {
        name: 'texture 0 "t0"',
        slots: ['baseColorTexture'],
        from: 'image/png',
        to: 'image/png',
        before: loose.byteLength,
        after: textures[0]!.getImage()!.byteLength,
      },
    ])
    expect(reports[0]!.after).toBeLessThan(loose.byteLength / 10)
    await expectSamePixels(textures[0]!.getImage()!, raw.data)
    for (let i = 1; i < images.length; i++) expect(textures[i]!.getImage()).toBe(images[i]!.bytes)
  })

  it('keeps a PNG that is already as small as this encoder makes it', async () => {
    const tiny = await encodeSmallestPng(image(8, 8, () => [1, 2, 3, 255]))
    const doc = docWithImages([{ bytes: tiny, mimeType: 'image/png' }])
    expect(await repackPngTextures(doc, { sharp, concurrency: 1 })).toEqual([])
    expect(doc.getRoot().listTextures()[0]!.getImage()).toBe(tiny)
  })
})

const corpus = corpusFiles({ clearCoat: assimp('glTF2', 'ClearCoat-glTF', 'ClearCoatTest.gltf') })

describe.skipIf(!corpus.available)('compress re-packs a corpus file’s PNG and JPEG textures, every pixel kept', () => {
  const pool = createEnginePool({ threads: 1 })
  afterAll(() => pool.destroy())

  it('ClearCoatTest.gltf: its PNGs and its JPEG smaller and decoding to the same pixels, the task saying so', async () => {
    const platform = await loadPlatform()
    const compressFile = compressFileWith(pool, platform)
    for (const engine of ['meshopt', 'draco']) {
      const { input, output, details } = await compressFile(corpus.paths.clearCoat, { engine })
      const byName = (doc: Document) =>
        new Map(
          doc
            .getRoot()
            .listTextures()
            .map((t) => [t.getName(), t]),
        )
      const before = byName(input)
      const after = byName(output)
      const repacked = details.textures_repacked as { name: string; from: string; to: string; before: number; after: number }[]
      // Every texture of the file: five PNGs, and a normal map written with T.81's example tables.
      expect(new Set([...before.values()].map((t) => t.getMimeType()))).toEqual(new Set(['image/png', 'image/jpeg']))
      expect(repacked.map((r) => r.name).sort()).toEqual(
        [...before.values()].map((t) => `texture ${input.getRoot().listTextures().indexOf(t)} "${t.getName()}"`).sort(),
      )
      for (const [name, texture] of before) {
        const written = after.get(name)!.getImage()!
        expect(written.byteLength, name).toBeLessThan(texture.getImage()!.byteLength)
        expect(repacked.find((r) => r.name.endsWith(`"${name}"`))).toEqual(
          expect.objectContaining({
            from: texture.getMimeType(),
            to: texture.getMimeType(),
            before: texture.getImage()!.byteLength,
            after: written.byteLength,
          }),
        )
        await expectSamePixels(written, await rgbaOf(texture.getImage()!), name)
      }
    }
  })
})
