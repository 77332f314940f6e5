// compress with texture_max_size and texture_format: a resized JPEG is lossy-encoded once, by texture_format.
import { read as readKtx2 } from 'ktx-parse'
import sharp, { type Sharp } from 'sharp'
import { afterAll, describe, expect, it } from 'vitest'
import { createEnginePool, loadPlatform, type TextureReport } from '../src/index.ts'
import { type ResizedPixels, resizedPixelsNote } from '../src/ops/resized-pixels.ts'
import { textureResize } from '../src/ops/texture-resize.ts'
import { success } from './support/job-result.ts'
import { meanAbsoluteError, testImage, texturedGlb, validateGlb } from './texture-fixtures.ts'

const pool = createEnginePool({ threads: 2 })
const platform = await loadPlatform()
afterAll(() => pool.destroy())

/** The base colour texture of a compress job's output, its details, and the output's glTF-Validator errors. */
async function compressed(glb: Uint8Array, options: Record<string, unknown>) {
  const result = success(await pool.run({ name: 'compress', input: { bytes: glb.slice() }, format: 'glb', options }))
  const doc = await platform.io.readBinary(result.bytes!)
  const texture = doc.getRoot().listMaterials()[0]!.getBaseColorTexture()!
  return { texture, details: result.details!, errors: (await validateGlb(result.bytes!)).errors }
}

describe('compress with texture_max_size and texture_format: one lossy encoding of a resized texture', () => {
  const SIZE = 256
  const encode = (image: Sharp, format: 'webp' | 'jpeg', quality: number) =>
    format === 'webp' ? image.webp({ quality, effort: 4 }) : image.jpeg({ quality, mozjpeg: true })

  for (const format of ['webp', 'jpeg'] as const) {
    it(`JPEG → ${format}: closer to the resized original than the resize's JPEG re-encoded, and no larger than compress with the resize alone`, async () => {
      const original = await testImage(1024, 'jpeg')
      const glb = await texturedGlb(platform, [{ baseColor: original }])
      const resize = { engine: 'meshopt', texture_max_size: SIZE }
      const once = await compressed(glb, { ...resize, texture_format: format })
      const plain = await compressed(glb, resize)
      expect(once.errors).toEqual([])

      const resized = sharp(original).resize({ width: SIZE, height: SIZE, fit: 'fill' })
      const reference = await resized.clone().raw().toBuffer()
      // What the two steps wrote: the resize's JPEG at quality 90 (as compress without texture_format
      // writes it, pixel for pixel), then that JPEG decoded and encoded at texture_format's default 82.
      const resizeJpeg = await resized.clone().jpeg({ quality: 90, mozjpeg: true }).toBuffer()
      expect(
        (await sharp(plain.texture.getImage()!).raw().toBuffer()).equals(await sharp(resizeJpeg).raw().toBuffer()),
        'the same pixels',
      ).toBe(true)
      const twoSteps = new Uint8Array(await encode(sharp(resizeJpeg), format, 82).toBuffer())
      const oneStep = new Uint8Array(await encode(resized.clone(), format, 82).toBuffer())

      const image = once.texture.getImage()!
      expect(once.texture.getMimeType()).toBe(`image/${format}`)
      expect(await sharp(image).metadata()).toMatchObject({ width: SIZE, height: SIZE })
      // The pixels the single encoding gives, measured against the resized original beside the two steps'.
      expect((await sharp(image).raw().toBuffer()).equals(await sharp(oneStep).raw().toBuffer()), 'the same pixels').toBe(true)
      const [error, twoStepError] = await Promise.all([meanAbsoluteError(image, reference), meanAbsoluteError(twoSteps, reference)])
      expect(error).toBeLessThan(twoStepError)
      expect(image.byteLength).toBeLessThanOrEqual(plain.texture.getImage()!.byteLength)

      const report = (once.details.textures as TextureReport[])[0]!
      expect(report.note).toBe('encoded once from the pixels texture_max_size resized, not from the JPEG it wrote of them')
      expect(once.details.textures_resized).toEqual(plain.details.textures_resized)
    })
  }

  it('a re-encoding not smaller than the resize writes keeps the resize’s JPEG, as compress with the resize alone writes it', async () => {
    const glb = await texturedGlb(platform, [{ baseColor: await testImage(1024, 'jpeg') }])
    const resize = { engine: 'meshopt', texture_max_size: SIZE }
    // JPEG at quality 100 is larger than the resize's quality 90.
    const kept = await compressed(glb, { ...resize, texture_format: 'jpeg', texture_quality: 100 })
    const plain = await compressed(glb, resize)
    expect(kept.errors).toEqual([])
    expect(kept.texture.getImage()).toEqual(plain.texture.getImage())
    const report = (kept.details.textures as TextureReport[])[0]!
    expect(report.note).toMatch(/^original kept: JPEG at quality 100 would be \d+ bytes/)
    expect(report.note).not.toMatch(/encoded once/)
  })

  it('JPEG → ktx2: encoded from the resized pixels at the resized size, valid', async () => {
    const glb = await texturedGlb(platform, [{ baseColor: await testImage(1024, 'jpeg') }])
    const ktx2 = await compressed(glb, { engine: 'meshopt', texture_max_size: SIZE, texture_format: 'ktx2' })
    expect(ktx2.errors).toEqual([])
    expect(ktx2.texture.getMimeType()).toBe('image/ktx2')
    const container = readKtx2(ktx2.texture.getImage()!)
    expect([container.pixelWidth, container.pixelHeight]).toEqual([SIZE, SIZE])
    const report = (ktx2.details.textures as TextureReport[])[0]!
    expect(report).toMatchObject({ from: 'image/jpeg', to: 'image/ktx2', note: resizedPixelsNote('image/jpeg') })
  })

  it('holds the resized pixels of a model within a bound: past it a texture is re-encoded from the resize’s JPEG, and the notes say which', async () => {
    const [a, b] = [await testImage(512, 'jpeg'), await testImage(512, 'png')]
    const doc = await platform.io.readBinary(
      await texturedGlb(platform, [{ baseColor: a }, { baseColor: await sharp(b).jpeg().toBuffer() }]),
    )
    const pixels: ResizedPixels = new Map()
    const notes: string[] = []
    // Room for one 256² texture's pixels (4 bytes a pixel), not two.
    await doc.transform(textureResize({ encoder: sharp, maxSize: SIZE, pixels, notes, heldPixelsMaxBytes: SIZE * SIZE * 4 }))
    const textures = doc.getRoot().listTextures()
    expect(textures.map((texture) => pixels.has(texture))).toEqual([true, false])
    expect(notes).toEqual([
      `texture 1 "${textures[1]!.getName()}": re-encoded from the resize's quality-90 coding, not from its resized pixels (this model's resized textures pass the 0.25 MiB of pixels Mos holds at once)`,
    ])
  })
})
