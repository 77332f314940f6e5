import { Document } from '@gltf-transform/core'
import { prune } from '@gltf-transform/functions'
import sharp from 'sharp'
import { afterAll, describe, expect, it } from 'vitest'
import { createEnginePool, loadPlatform, type Platform } from '../src/index.ts'
import { maySomeTextureBeSolid } from '../src/ops/solid-texture-screen.ts'
import { createRandom } from '../../../test/support/random.ts'
import { success } from './support/job-result.ts'
import { testImage, texturedGlb } from './texture-fixtures.ts'

/** A `size`² image of one colour, or of one colour varying by `spread` levels in a gradient (a near-solid scan). */
async function flatImage(size: number, format: 'png' | 'jpeg', rgb: number[], spread = 0): Promise<Uint8Array> {
  const raw = Buffer.alloc(size * size * 3)
  for (let i = 0; i < size * size; i++) for (let k = 0; k < 3; k++) raw[i * 3 + k] = rgb[k]! + Math.floor(((i % size) * spread) / size)
  const image = sharp(raw, { raw: { width: size, height: size, channels: 3 } })
  return new Uint8Array(await (format === 'png' ? image.png() : image.jpeg({ quality: 90 })).toBuffer())
}

/** sharp, counting the images it is given. */
function countingSharp() {
  let decodes = 0
  const counting = ((...args: Parameters<typeof sharp>) => {
    decodes++
    return sharp(...args)
  }) as typeof sharp
  return { counting, decodes: () => decodes }
}

function docWith(...images: Uint8Array[]): Document {
  const doc = new Document()
  for (const image of images)
    doc
      .createTexture()
      .setImage(image)
      .setMimeType(image[0] === 0xff ? 'image/jpeg' : 'image/png')
  return doc
}

/** glTF-Transform's own verdict, on a model whose one material uses the image. */
async function pruneFindsSolid(platform: Platform, image: Uint8Array): Promise<boolean> {
  const doc = await platform.io.readBinary(await texturedGlb(platform, [{ baseColor: image }]))
  await doc.transform(prune({ keepSolidTextures: false }))
  return doc.getRoot().listTextures().length === 0
}

describe('the solid-texture screen before prune()', async () => {
  const platform = await loadPlatform()
  const pool = createEnginePool({ threads: 1 })
  afterAll(() => pool.destroy())

  it('answers "may be solid" for every image prune() finds solid, JPEG at 2048² and PNG, and for near-solid scans', async () => {
    const solid = [
      await flatImage(2048, 'jpeg', [200, 40, 90]),
      await flatImage(64, 'png', [10, 250, 30]),
      await flatImage(512, 'jpeg', [128, 128, 128], 2),
      await flatImage(300, 'png', [0, 0, 0], 2),
    ]
    for (const image of solid) {
      expect(await pruneFindsSolid(platform, image)).toBe(true)
      expect(await maySomeTextureBeSolid(docWith(image), sharp)).toBe(true)
    }
  })

  it('takes a JPEG coding more than any one-colour image of its size for varied without decoding it; others are decoded', async () => {
    const { counting, decodes } = countingSharp()
    const random = createRandom(7)
    const noise = Buffer.from(Array.from({ length: 1024 * 1024 * 3 }, () => Math.floor(random() * 256)))
    const noisy = new Uint8Array(
      await sharp(noise, { raw: { width: 1024, height: 1024, channels: 3 } })
        .jpeg({ quality: 90 })
        .toBuffer(),
    )
    expect(noisy.byteLength).toBeGreaterThan(1024 * 1024 * 0.25)
    expect(await pruneFindsSolid(platform, noisy)).toBe(false)
    expect(await maySomeTextureBeSolid(docWith(noisy), counting)).toBe(false)
    expect(decodes()).toBe(0)
    // A one-colour JPEG codes far less, and a varied one under the bound is looked at as before.
    expect(await maySomeTextureBeSolid(docWith(await flatImage(2048, 'jpeg', [200, 40, 90])), counting)).toBe(true)
    expect(await maySomeTextureBeSolid(docWith(await flatImage(512, 'jpeg', [10, 20, 30], 200)), counting)).toBe(false)
    expect(decodes()).toBe(2)
  })

  it('answers "certainly not" only for images that vary, and whenever one image may be solid the document may', async () => {
    const varied = [await testImage(2048, 'jpeg'), await testImage(256, 'png', { alpha: true }), await testImage(512, 'webp')]
    for (const image of varied) expect(await pruneFindsSolid(platform, image)).toBe(false)
    expect(await maySomeTextureBeSolid(docWith(...varied), sharp)).toBe(false)
    expect(await maySomeTextureBeSolid(docWith(...varied, await flatImage(32, 'png', [1, 2, 3])), sharp)).toBe(true)
    expect(await maySomeTextureBeSolid(new Document(), sharp)).toBe(false)
  })

  it('reads grey images as prune() does, and leaves images it cannot read to prune()', async () => {
    const grey = new Uint8Array(
      await sharp(Buffer.from(Array.from({ length: 64 * 64 }, (_, i) => i % 256)), { raw: { width: 64, height: 64, channels: 1 } })
        .png()
        .toBuffer(),
    )
    expect(await pruneFindsSolid(platform, grey)).toBe(false)
    expect(await maySomeTextureBeSolid(docWith(grey), sharp)).toBe(false)
    expect(await maySomeTextureBeSolid(docWith(new Uint8Array([1, 2, 3, 4])), sharp)).toBe(true)
  })

  it('looks at a whole decode under way for another step in place of decoding again, with the same verdicts', async () => {
    const { counting, decodes } = countingSharp()
    const wholeDecode = (image: Uint8Array) => sharp(image).ensureAlpha().raw().toBuffer()
    const solid = await flatImage(300, 'png', [0, 0, 0], 2)
    const varied = await testImage(256, 'png', { alpha: true })
    const decoded = new Map([solid, varied].map((image) => [image, wholeDecode(image).then((data) => ({ data }))]))
    expect(await maySomeTextureBeSolid(docWith(solid), counting, (image) => decoded.get(image))).toBe(true)
    expect(await maySomeTextureBeSolid(docWith(varied), counting, (image) => decoded.get(image))).toBe(false)
    expect(decodes()).toBe(0)
    // An image with no decode under way (or none answered) is decoded as before.
    expect(await maySomeTextureBeSolid(docWith(varied), counting, () => Promise.resolve(undefined))).toBe(false)
    expect(decodes()).toBe(1)
  })

  it('compress turns a solid PNG into its factor beside a varied one, the screen reading the re-pack’s decodes', async () => {
    const glb = await texturedGlb(platform, [
      { baseColor: await flatImage(256, 'png', [255, 0, 0]) },
      { baseColor: await testImage(256, 'png', { alpha: true }) },
    ])
    const result = success(await pool.run({ name: 'compress', input: { bytes: glb }, format: 'glb', options: { engine: 'meshopt' } }))
    const out = await platform.io.readBinary(result.bytes!)
    const [red, varied] = out.getRoot().listMaterials()
    expect(red!.getBaseColorTexture()).toBeNull()
    expect(red!.getBaseColorFactor()[0]).toBeCloseTo(1, 1)
    expect(varied!.getBaseColorTexture()).not.toBeNull()
    expect(out.getRoot().listTextures()).toHaveLength(1)
  })

  it('compress still turns a solid texture into its factor beside a varied one, with either engine', async () => {
    const glb = await texturedGlb(platform, [
      { baseColor: await flatImage(1024, 'jpeg', [255, 0, 0]) },
      { baseColor: await testImage(1024, 'jpeg') },
    ])
    for (const engine of ['draco', 'meshopt'] as const) {
      const result = success(await pool.run({ name: 'compress', input: { bytes: glb.slice() }, format: 'glb', options: { engine } }))
      const out = await platform.io.readBinary(result.bytes!)
      const [red, varied] = out.getRoot().listMaterials()
      expect(red!.getBaseColorTexture()).toBeNull()
      expect(red!.getBaseColorFactor()[0]).toBeCloseTo(1, 1)
      expect(red!.getBaseColorFactor()[1]).toBeCloseTo(0, 1)
      expect(varied!.getBaseColorTexture()).not.toBeNull()
      expect(out.getRoot().listTextures()).toHaveLength(1)
    }
  })
})
