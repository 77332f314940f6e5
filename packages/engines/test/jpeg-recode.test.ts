import { readFileSync } from 'node:fs'
import { Document } from '@gltf-transform/core'
import sharp from 'sharp'
import { describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { jpegSegments } from '../src/io/image-header.ts'
import { recodeJpegHuffman } from '../src/io/jpeg-recode.ts'
import { recodeJpegTextures } from '../src/ops/jpeg-recode.ts'
import { damagedScans, pixelsOf } from './support/jpeg.ts'
import { noise } from './support/noise.ts'

/** Both decode to the same pixels, byte for byte (Buffer.equals: vitest's deep equality is slow on megabytes). */
async function expectSamePixels(recoded: Uint8Array, original: Uint8Array, label: string): Promise<void> {
  const [a, b] = await Promise.all([pixelsOf(recoded), pixelsOf(original)])
  expect(a !== undefined && b !== undefined && a.equals(b), `${label}: pixels differ`).toBe(true)
}

/** Every segment before the first scan except the Huffman tables, as bytes: what the re-coder must carry over. */
function headerSegmentsBesidesTables(jpeg: Uint8Array): string[] {
  const kept: string[] = []
  for (const { marker, offset, length } of jpegSegments(jpeg)) {
    if (marker === 0xda) break
    if (marker !== 0xc4) kept.push(Buffer.from(jpeg.subarray(offset, offset + 2 + length)).toString('hex'))
  }
  return kept
}

/** A width × height RGB image: smooth gradients with a little noise, as a texture has. */
function texture(width: number, height: number): { data: Uint8Array; raw: { width: number; height: number; channels: 3 } } {
  const grain = noise(width * height)
  const data = new Uint8Array(width * height * 3)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const at = (y * width + x) * 3
      const g = grain[y * width + x]! >> 4
      data[at] = (x * 3 + g) & 0xff
      data[at + 1] = (y * 2 + g) & 0xff
      data[at + 2] = ((x ^ y) + g) & 0xff
    }
  }
  return { data, raw: { width, height, channels: 3 } }
}

describe('recodeJpegHuffman: the smallest Huffman tables, every coefficient kept', () => {
  it('re-codes baseline JPEGs written with the standard tables, whatever their sampling and size, to the same pixels', async () => {
    const cases = [
      { size: [256, 256], options: { chromaSubsampling: '4:2:0' } },
      { size: [256, 128], options: { chromaSubsampling: '4:4:4' } },
      { size: [37, 23], options: { chromaSubsampling: '4:2:0', quality: 95 } },
      { size: [100, 61], options: { chromaSubsampling: '4:4:4', quality: 40 } },
    ] as const
    for (const { size, options } of cases) {
      const { data, raw } = texture(size[0], size[1])
      const input = new Uint8Array(
        await sharp(data, { raw })
          .jpeg({ ...options, optimiseCoding: false })
          .toBuffer(),
      )
      const recoded = recodeJpegHuffman(input)
      const label = `${size.join('×')} ${JSON.stringify(options)}`
      expect(recoded, label).toBeDefined()
      expect(recoded!.byteLength, label).toBeLessThan(input.byteLength)
      await expectSamePixels(recoded!, input, label)
      // The tables it writes are the smallest: a second pass has nothing left to gain.
      expect(recodeJpegHuffman(recoded!), label).toBeUndefined()
    }
  })

  it('re-codes a large texture written with the example tables, and leaves one whose tables were made for it', async () => {
    const { data, raw } = texture(1024, 768)
    const standard = new Uint8Array(await sharp(data, { raw }).jpeg({ quality: 92, optimiseCoding: false }).toBuffer())
    const optimal = new Uint8Array(await sharp(data, { raw }).jpeg({ quality: 92, optimiseCoding: true }).toBuffer())
    const recoded = recodeJpegHuffman(standard)
    expect(recoded!.byteLength).toBeLessThan(standard.byteLength)
    await expectSamePixels(recoded!, standard, 'standard tables')
    expect(recodeJpegHuffman(optimal)).toBeUndefined()
  })

  it('re-codes a greyscale JPEG (one component, one scan of its own blocks)', async () => {
    const { data } = texture(90, 70)
    const grey = Uint8Array.from({ length: 90 * 70 }, (_, i) => data[i * 3]!)
    const input = new Uint8Array(
      await sharp(grey, { raw: { width: 90, height: 70, channels: 1 } })
        .jpeg({ optimiseCoding: false })
        .toBuffer(),
    )
    const recoded = recodeJpegHuffman(input)
    expect(recoded!.byteLength).toBeLessThan(input.byteLength)
    await expectSamePixels(recoded!, input, 'grey')
  })

  it('leaves alone JPEGs whose tables are already the smallest, progressive ones, and what is not a JPEG', async () => {
    const { data, raw } = texture(128, 128)
    const optimized = new Uint8Array(await sharp(data, { raw }).jpeg({ optimiseCoding: true }).toBuffer())
    const progressive = new Uint8Array(await sharp(data, { raw }).jpeg({ progressive: true, optimiseCoding: false }).toBuffer())
    expect(recodeJpegHuffman(optimized)).toBeUndefined()
    expect(recodeJpegHuffman(progressive)).toBeUndefined()
    expect(recodeJpegHuffman(new Uint8Array(await sharp(data, { raw }).png().toBuffer()))).toBeUndefined()
    expect(recodeJpegHuffman(new Uint8Array(0))).toBeUndefined()
  })

  it('answers undefined, never throws, for a JPEG cut short or with its scan data damaged; what it re-codes decodes as the damaged file does', async () => {
    const { data, raw } = texture(96, 96)
    const input = new Uint8Array(await sharp(data, { raw }).jpeg({ optimiseCoding: false }).toBuffer())
    const scan = [...jpegSegments(input)].find((s) => s.marker === 0xda)!
    const dataStart = scan.offset + 2 + scan.length
    for (const cut of [dataStart - 3, dataStart + 10, Math.floor((dataStart + input.byteLength) / 2), input.byteLength - 4]) {
      expect(recodeJpegHuffman(input.subarray(0, cut)), `cut at ${cut}`).toBeUndefined()
    }
    // Without only its EOI, the scan is whole: re-coded, and written without an EOI, as it came.
    const noEnd = recodeJpegHuffman(input.subarray(0, input.byteLength - 2))!
    expect([...noEnd.subarray(noEnd.byteLength - 2)]).not.toEqual([0xff, 0xd9])
    await expectSamePixels(Buffer.concat([noEnd, Uint8Array.of(0xff, 0xd9)]), input, 'without EOI') // libjpeg-turbo wants the EOI
    let compared = 0
    for (const { at, bytes: damaged } of damagedScans(input, 60, 5)) {
      const recoded = recodeJpegHuffman(damaged)
      // Only where libjpeg-turbo reads the damaged file without complaint can the two be compared.
      if (recoded && (await pixelsOf(damaged))) {
        await expectSamePixels(recoded, damaged, `byte ${at}`)
        compared++
      }
    }
    // Damage that still decodes (a different coefficient, a code of the same length) is common.
    expect(compared).toBeGreaterThan(0)
  })
})

const corpus = corpusFiles({
  normals: assimp('glTF2', 'ClearCoat-glTF', 'PlasticWrap_normals.jpg'),
  duck: assimp('Collada', 'duck_sample.jpg'),
  // Restart markers every few MCUs.
  restarts: assimp('3DS', 'IMAGE2.jpg'),
  // 256 bytes of something after its EOI.
  trailing: assimp('Ogre', 'TheThing', 'Wrinkles.jpg'),
  progressive: assimp('MS3D', 'jeep1.jpg'),
})

describe.skipIf(!corpus.available)('recodeJpegHuffman on JPEGs real exporters wrote', () => {
  it('makes each smaller with the same pixels, keeping every other segment and the bytes after the image', async () => {
    for (const name of ['normals', 'duck', 'restarts', 'trailing'] as const) {
      const input = new Uint8Array(readFileSync(corpus.paths[name]))
      const recoded = recodeJpegHuffman(input)
      expect(recoded, name).toBeDefined()
      expect(recoded!.byteLength, name).toBeLessThan(input.byteLength)
      await expectSamePixels(recoded!, input, name)
      expect(headerSegmentsBesidesTables(recoded!), name).toEqual(headerSegmentsBesidesTables(input))
      if (name === 'trailing') {
        // The file's EOI, then 256 bytes the image does not use: both carried over as they were.
        const tail = (jpeg: Uint8Array) => Buffer.from(jpeg.subarray(jpeg.byteLength - 258))
        expect([...tail(input).subarray(0, 2)]).toEqual([0xff, 0xd9])
        expect(tail(recoded!).equals(tail(input))).toBe(true)
      }
    }
    expect(recodeJpegHuffman(new Uint8Array(readFileSync(corpus.paths.progressive)))).toBeUndefined()
  })

  it('recodeJpegTextures re-codes a document’s JPEG textures, reports each, and leaves other images alone', async () => {
    const normals = new Uint8Array(readFileSync(corpus.paths.normals))
    const png = new Uint8Array(
      await sharp({ create: { width: 8, height: 8, channels: 3, background: '#336699' } })
        .png()
        .toBuffer(),
    )
    const doc = new Document()
    const jpegTexture = doc.createTexture('normals').setImage(normals).setMimeType('image/jpeg')
    const pngTexture = doc.createTexture('flat').setImage(png).setMimeType('image/png')
    doc.createMaterial().setNormalTexture(jpegTexture).setBaseColorTexture(pngTexture)
    const reports = recodeJpegTextures(doc)
    const written = jpegTexture.getImage()!
    expect(reports).toEqual([
      {
        name: 'texture 0 "normals"',
        slots: ['normalTexture'],
        from: 'image/jpeg',
        to: 'image/jpeg',
        before: normals.byteLength,
        after: written.byteLength,
      },
    ])
    expect(written.byteLength).toBeLessThan(normals.byteLength)
    expect(written.buffer.byteLength).toBe(written.byteLength) // not a view into a larger buffer
    expect(pngTexture.getImage()).toBe(png)
    // Over the size bound a JPEG is carried as it came.
    jpegTexture.setImage(normals)
    expect(recodeJpegTextures(doc, { maxBytes: normals.byteLength - 1 })).toEqual([])
    expect(jpegTexture.getImage()).toBe(normals)
  })
})
