import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Document } from '@gltf-transform/core'
import sharp from 'sharp'
import { describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { jpegSegments } from '../src/io/image-header.ts'
import { readJpegCoefficients } from '../src/io/jpeg-coefficients.ts'
import { writeProgressiveJpeg } from '../src/io/jpeg-progressive.ts'
import { recodeJpegHuffman } from '../src/io/jpeg-recode.ts'
import { recodeJpegTextures } from '../src/ops/jpeg-recode.ts'
import { damagedScans, frameMarker, pixelsOf } from './support/jpeg.ts'
import { noise } from './support/noise.ts'

/** The sequential JPEG written again as progressive; the two decode to the same pixels, byte for byte. */
async function progressiveOf(jpeg: Uint8Array, label: string): Promise<Uint8Array> {
  const coefficients = readJpegCoefficients(jpeg)
  expect(coefficients, `${label}: read`).toBeDefined()
  const progressive = writeProgressiveJpeg(coefficients!)
  expect(progressive, `${label}: written`).toBeDefined()
  const [a, b] = await Promise.all([pixelsOf(progressive!), pixelsOf(jpeg)])
  expect(a !== undefined && b !== undefined && a.equals(b), `${label}: pixels differ`).toBe(true)
  return progressive!
}

/** Every APPn, COM and DQT segment, in order: what a re-coded file carries over. */
function carriedSegments(jpeg: Uint8Array): string[] {
  const kept: string[] = []
  for (const { marker, offset, length } of jpegSegments(jpeg)) {
    if (marker === 0xda) break
    if ((marker >= 0xe0 && marker <= 0xef) || marker === 0xfe || marker === 0xdb)
      kept.push(Buffer.from(jpeg.subarray(offset, offset + 2 + length)).toString('hex'))
  }
  return kept
}

/** A width × height image: gradients with a little noise, as a texture has. */
function texture(width: number, height: number, channels: 1 | 3 = 3) {
  const grain = noise(width * height)
  const data = new Uint8Array(width * height * channels)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const g = grain[y * width + x]! >> 3
      for (let c = 0; c < channels; c++) data[(y * width + x) * channels + c] = (x * (3 - c) + y * (c + 1) + g) & 0xff
    }
  }
  return { data, raw: { width, height, channels } }
}

describe('writeProgressiveJpeg: a sequential JPEG as progressive, every coefficient kept', () => {
  it('writes JPEGs of any sampling, size and quality as progressive ones with the same pixels', async () => {
    const cases = [
      { size: [512, 512], options: { chromaSubsampling: '4:2:0' } },
      { size: [256, 128], options: { chromaSubsampling: '4:4:4', quality: 95 } },
      { size: [37, 23], options: { chromaSubsampling: '4:2:0', quality: 100 } },
      { size: [100, 61], options: { chromaSubsampling: '4:4:4', quality: 30 } },
      { size: [1, 1], options: {} },
      { size: [17, 300], options: { chromaSubsampling: '4:2:0' } },
    ] as const
    for (const { size, options } of cases) {
      const { data, raw } = texture(size[0], size[1])
      const jpeg = new Uint8Array(await sharp(data, { raw }).jpeg(options).toBuffer())
      const label = `${size.join('×')} ${JSON.stringify(options)}`
      const progressive = await progressiveOf(jpeg, label)
      expect(frameMarker(progressive), label).toBe(0xc2)
      expect(carriedSegments(progressive), label).toEqual(carriedSegments(jpeg))
    }
  })

  it('writes a greyscale JPEG (one component: every scan over its own blocks)', async () => {
    for (const [width, height] of [
      [90, 70],
      [256, 256],
    ] as const) {
      const { data, raw } = texture(width, height, 1)
      const jpeg = new Uint8Array(await sharp(data, { raw }).jpeg().toBuffer())
      expect(frameMarker(await progressiveOf(jpeg, `grey ${width}×${height}`))).toBe(0xc2)
    }
  })

  it('writes a CMYK JPEG (four components: the script that codes each alike)', async () => {
    const { data, raw } = texture(200, 120)
    const jpeg = new Uint8Array(await sharp(data, { raw }).toColourspace('cmyk').jpeg().toBuffer())
    expect(readJpegCoefficients(jpeg)?.frame.components.length).toBe(4)
    expect(frameMarker(await progressiveOf(jpeg, 'cmyk'))).toBe(0xc2)
  })

  it('codes a photo-like texture smaller than its smallest sequential coding', async () => {
    const { data, raw } = texture(1024, 1024)
    const jpeg = new Uint8Array(await sharp(data, { raw }).jpeg({ quality: 90, optimiseCoding: true }).toBuffer())
    expect(recodeJpegHuffman(jpeg)).toBeUndefined() // its tables are already its own
    const progressive = await progressiveOf(jpeg, '1024²')
    expect(progressive.byteLength).toBeLessThan(jpeg.byteLength * 0.98)
  })

  it('reads nothing it does not fully understand: progressive, cut short, damaged or not a JPEG; never throws', async () => {
    const { data, raw } = texture(96, 96)
    const jpeg = new Uint8Array(await sharp(data, { raw }).jpeg({ optimiseCoding: false }).toBuffer())
    expect(readJpegCoefficients(writeProgressiveJpeg(readJpegCoefficients(jpeg)!)!)).toBeUndefined()
    expect(readJpegCoefficients(new Uint8Array(await sharp(data, { raw }).png().toBuffer()))).toBeUndefined()
    expect(readJpegCoefficients(new Uint8Array(0))).toBeUndefined()
    // Over the coefficient bound (a 96² 4:2:0 image: 144 luma blocks and 36 of each chroma, 13 824 coefficients), nothing is read.
    expect(readJpegCoefficients(jpeg, 13_824)).toBeDefined()
    expect(readJpegCoefficients(jpeg, 13_823)).toBeUndefined()
    const huge = jpeg.slice()
    const frame = [...jpegSegments(huge)].find(({ marker }) => marker === 0xc0)!
    huge.set([0xff, 0xff, 0xff, 0xff], frame.offset + 5) // 65 535 × 65 535 pixels
    expect(readJpegCoefficients(huge)).toBeUndefined()
    // Components whose blocks overflow one interleaved MCU (11 > 10; fine in one scan each): not written.
    const image = readJpegCoefficients(jpeg)!
    const sampling = (h: number, v: number) => image.frame.components.map((c, i) => (i === 0 ? { ...c, h, v } : { ...c, h: 1, v: 1 }))
    const crowded = sampling(4, 2).map((c, i) => (i === 1 ? { ...c, h: 2 } : c))
    expect(writeProgressiveJpeg({ ...image, frame: { ...image.frame, components: crowded } })).toBeUndefined()
    // Its one scan twice over (the components coded again): which coding a decoder keeps is its own choice.
    const sos = [...jpegSegments(jpeg)].find(({ marker }) => marker === 0xda)!.offset
    const end = jpeg.byteLength - 2
    expect(readJpegCoefficients(Buffer.concat([jpeg.subarray(0, end), jpeg.subarray(sos, end), jpeg.subarray(end)]))).toBeUndefined()
    for (const cut of [20, jpeg.byteLength / 2, jpeg.byteLength - 4])
      expect(readJpegCoefficients(jpeg.subarray(0, cut)), `cut at ${cut}`).toBeUndefined()
    let compared = 0
    for (const { at, bytes: damaged } of damagedScans(jpeg, 60, 9)) {
      const coefficients = readJpegCoefficients(damaged)
      // Where the damage still decodes, both decoders read the same coefficients from it.
      if (coefficients && (await pixelsOf(damaged))) {
        await progressiveOf(damaged, `byte ${at}`)
        compared++
      }
    }
    expect(compared).toBeGreaterThan(0)
    // Damage to the marker segments (lengths, the frame header, tables): read or refused, never a throw.
    const header = [...jpegSegments(jpeg)].find((s) => s.marker === 0xda)!.offset
    const flips = noise(400, 11)
    for (let i = 0; i < 200; i++) {
      const damaged = jpeg.slice()
      damaged[2 + (((flips[2 * i]! << 8) | flips[2 * i + 1]!) % (header - 2))] = flips[2 * i + 1]!
      const coefficients = readJpegCoefficients(damaged)
      if (coefficients) expect(writeProgressiveJpeg(coefficients)).toBeInstanceOf(Uint8Array)
    }
  })
})

const corpus = corpusFiles({
  normals: assimp('glTF2', 'ClearCoat-glTF', 'PlasticWrap_normals.jpg'),
  restarts: assimp('3DS', 'IMAGE2.jpg'),
  trailing: assimp('Ogre', 'TheThing', 'Wrinkles.jpg'),
  progressive: assimp('MS3D', 'jeep1.jpg'),
})

/** Every JPEG under a folder. */
function jpegsUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => /\.jpe?g$/i.test(name))
    .map((name) => join(dir, name))
}

describe.skipIf(!corpus.available)('writeProgressiveJpeg on JPEGs real exporters wrote', () => {
  it('writes every sequential JPEG of the assimp corpus as progressive with the same pixels, each over 30 KB smaller', async () => {
    const files = jpegsUnder(assimp())
    expect(files.length).toBeGreaterThanOrEqual(20)
    let written = 0
    const larger: string[] = []
    for (const file of files) {
      const jpeg = new Uint8Array(readFileSync(file))
      if (frameMarker(jpeg) === 0xc2 || !readJpegCoefficients(jpeg)) {
        expect(frameMarker(jpeg), `${file} is sequential and was not read`).not.toBe(0xc0)
        continue
      }
      const progressive = await progressiveOf(jpeg, file)
      expect(carriedSegments(progressive), file).toEqual(carriedSegments(jpeg))
      written++
      const sequential = recodeJpegHuffman(jpeg) ?? jpeg
      if (jpeg.byteLength > 30_000 && progressive.byteLength >= sequential.byteLength) larger.push(file)
    }
    expect(written).toBeGreaterThanOrEqual(18)
    expect(larger).toEqual([])
  })

  it('carries restart-coded scans, and the bytes after the image, into the progressive file', async () => {
    for (const name of ['restarts', 'trailing'] as const) {
      const jpeg = new Uint8Array(readFileSync(corpus.paths[name]))
      const progressive = await progressiveOf(jpeg, name)
      expect(
        [...jpegSegments(progressive)].some(({ marker }) => marker === 0xdd),
        name,
      ).toBe(false)
      if (name === 'trailing') {
        const tail = (bytes: Uint8Array) => Buffer.from(bytes.subarray(bytes.byteLength - 258))
        expect(tail(progressive).equals(tail(jpeg))).toBe(true)
      }
    }
  })

  it('recodeJpegTextures keeps the smaller of the sequential and progressive coding, and says which', async () => {
    const normals = new Uint8Array(readFileSync(corpus.paths.normals))
    const small = new Uint8Array(
      await sharp(texture(32, 32).data, { raw: texture(32, 32).raw })
        .jpeg({ optimiseCoding: false })
        .toBuffer(),
    )
    const doc = new Document()
    const big = doc.createTexture('normals').setImage(normals).setMimeType('image/jpeg')
    const tiny = doc.createTexture('tiny').setImage(small).setMimeType('image/jpeg')
    doc.createMaterial().setNormalTexture(big).setBaseColorTexture(tiny)
    const sequentialSizes = [recodeJpegHuffman(normals)!.byteLength, recodeJpegHuffman(small)!.byteLength]
    const reports = recodeJpegTextures(doc, { progressive: true })
    const byName = new Map(reports.map((report) => [report.slots?.includes('normalTexture') ? 'normals' : 'tiny', report]))
    // The 144 KB normal map codes smaller as progressive; a 32² image's extra scans cost more than they save.
    expect(byName.get('normals')).toMatchObject({ progressive: true, before: normals.byteLength, after: big.getImage()!.byteLength })
    expect(big.getImage()!.byteLength).toBeLessThan(sequentialSizes[0]!)
    expect(frameMarker(big.getImage()!)).toBe(0xc2)
    expect(byName.get('tiny')?.progressive).toBeUndefined()
    expect(tiny.getImage()!.byteLength).toBe(sequentialSizes[1])
    // Without the option, nothing becomes progressive.
    const plain = new Document()
    const again = plain.createTexture('normals').setImage(normals).setMimeType('image/jpeg')
    plain.createMaterial().setNormalTexture(again)
    expect(recodeJpegTextures(plain)[0]?.progressive).toBeUndefined()
    expect(frameMarker(again.getImage()!)).toBe(0xc0)
  })
})
