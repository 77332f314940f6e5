import { readFile } from 'node:fs/promises'
import { Document } from '@gltf-transform/core'
import sharp from 'sharp'
import { afterAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import { createEnginePool, loadPlatform, textureOptimize, readableFormats, writableFormats } from '../src/index.ts'
import { success } from './support/job-result.ts'
import { bombPng, storedZip, testImage, testNormalMap, texturedGlb, validateGlb } from './texture-fixtures.ts'

const { available, paths } = corpusFiles({
  knight: shared('glb', 'chr_knight.glb'),
  box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
  boxEmbedded: assimp('glTF2', 'BoxTextured-glTF-Embedded', 'BoxTextured.gltf'),
  spiderDir: assimp('OBJ'),
})

const pool = createEnginePool({ threads: 2 })
const platform = await loadPlatform()
afterAll(() => pool.destroy())

const extensionsUsed = (doc: Document) =>
  doc
    .getRoot()
    .listExtensionsUsed()
    .map((e) => e.extensionName)
const extensionsRequired = (doc: Document) =>
  doc
    .getRoot()
    .listExtensionsRequired()
    .map((e) => e.extensionName)

describe.skipIf(!available)('texture_optimize on real models', () => {
  for (const [model, format, mime] of [
    ['knight', 'webp', 'image/webp'],
    ['box', 'jpeg', 'image/jpeg'],
    ['box', 'png', 'image/png'],
  ] as const) {
    it(`${model} → ${format}: every texture re-encoded, or kept where that would grow it; slots kept, valid glTF`, async () => {
      const input = await platform.io.readBinary(new Uint8Array(await readFile(paths[model])))
      const result = success(
        await pool.run({ name: 'texture_optimize', input: { path: paths[model] }, format: 'glb', options: { format } }),
      )
      expect(result.extension).toBe('glb')
      const output = await platform.io.readBinary(result.bytes!)
      const textures = output.getRoot().listTextures()
      expect(textures.length).toBe(input.getRoot().listTextures().length)
      const reports = (result.details as { textures: { before: number; after: number; note?: string }[] }).textures
      for (const [i, texture] of textures.entries()) {
        const original = input.getRoot().listTextures()[i]!
        const report = reports[i]!
        if (Buffer.from(texture.getImage()!).equals(original.getImage()!)) {
          // Not smaller re-encoded (a small, already tight PNG): its bytes and type stay, and the report says so.
          expect(texture.getMimeType()).toBe(original.getMimeType())
          expect(report.note).toMatch(/original kept: .* would be \d+ bytes, not smaller than its \d+$/)
          continue
        }
        expect(texture.getMimeType()).toBe(mime)
        expect(report.after).toBeLessThan(report.before)
        const meta = await sharp(texture.getImage()!).metadata()
        expect(meta.format).toBe(format)
        const before = await sharp(original.getImage()!).metadata()
        expect([meta.width, meta.height]).toEqual([before.width, before.height])
      }
      // Every material still points at a texture in the slots it had.
      for (const [i, material] of output.getRoot().listMaterials().entries()) {
        const was = input.getRoot().listMaterials()[i]!
        expect(Boolean(material.getBaseColorTexture())).toBe(Boolean(was.getBaseColorTexture()))
      }
      // EXT_texture_webp is required exactly while a texture is WebP (none when every texture kept its bytes).
      if (textures.some((t) => t.getMimeType() === 'image/webp')) expect(extensionsRequired(output)).toContain('EXT_texture_webp')
      else expect(extensionsUsed(output)).not.toContain('EXT_texture_webp')
      const details = result.details as {
        textures: { before: number; after: number }[]
        texture_bytes_before: number
        texture_bytes_after: number
      }
      expect(details.textures.length).toBe(textures.length)
      expect(details.texture_bytes_after).toBe(textures.reduce((sum, t) => sum + t.getImage()!.byteLength, 0))
      expect((await validateGlb(result.bytes!)).errors).toEqual([])
    })
  }

  it('BoxTextured.gltf (embedded) → the gltf writer’s container, or GLB until there is one', async () => {
    const result = success(
      await pool.run({ name: 'texture_optimize', input: { path: paths.boxEmbedded }, format: 'gltf', options: { format: 'webp' } }),
    )
    if (writableFormats().includes('gltf')) {
      expect(result.extension).toBe('zip')
      return
    }
    expect(result.extension).toBe('glb')
    const output = await platform.io.readBinary(result.bytes!)
    expect(output.getRoot().listMaterials()[0]!.getBaseColorTexture()!.getMimeType()).toBe('image/webp')
    expect((await validateGlb(result.bytes!)).errors).toEqual([])
  })

  // Needs the format layer's zip reader; runs once it is merged.
  it.skipIf(!readableFormats().includes('zip'))('spider.obj with its textures in a zip → a glTF zip of WebP textures', async () => {
    const names = [
      'spider.obj',
      'spider.mtl',
      'SpiderTex.jpg',
      'drkwood2.jpg',
      'engineflare1.jpg',
      'wal67ar_small.jpg',
      'wal69ar_small.jpg',
    ]
    const files = Object.fromEntries(
      await Promise.all(names.map(async (n) => [n, new Uint8Array(await readFile(`${paths.spiderDir}/${n}`))] as const)),
    )
    const result = success(
      await pool.run({ name: 'texture_optimize', input: { bytes: storedZip(files) }, format: 'zip', options: { format: 'webp' } }),
    )
    expect(result.extension).toBe('zip')
    const details = result.details as { textures: { from: string; to: string; before: number; after: number; note?: string }[] }
    expect(details.textures.length).toBe(5)
    for (const texture of details.textures) {
      // WebP where it is smaller than the JPEG's smallest lossless coding; a JPEG that WebP would not
      // beat keeps its image, re-coded losslessly where that is smaller, and the report says which.
      if (texture.to === 'image/webp') expect(texture.after).toBeLessThan(texture.before)
      else {
        expect([texture.to, texture.note]).toEqual(['image/jpeg', expect.stringContaining('original kept')])
        if (texture.after < texture.before) expect(texture.note).toMatch(/its JPEG coefficients re-coded losslessly .*: \d+ → \d+ bytes/)
        else expect(texture.after).toBe(texture.before)
      }
      expect(texture.from).toBe('image/jpeg')
    }
    expect(details.textures.some((texture) => texture.to === 'image/webp')).toBe(true)
    // Kept as JPEG (WebP would grow them), re-coded: wal69ar_small.jpg's example tables 7 929 → 6 726 B,
    // SpiderTex.jpg as progressive 15 750 → 15 241 B.
    expect(details.textures.some((texture) => texture.to === 'image/jpeg' && texture.after < texture.before)).toBe(true)
  })

  it('refuses a texture over maxTextureBytes with the licence message', async () => {
    const result = await pool.run({
      name: 'texture_optimize',
      input: { path: paths.box },
      format: 'glb',
      options: { format: 'webp', maxTextureBytes: 1000 },
    })
    expect(result).toEqual({
      ok: false,
      message: expect.stringMatching(
        /^texture 0( "[^"]*")? is [\d.]+ MB, over the texture size limit of [\d.]+ MB for the current license tier$/,
      ),
    })
  })
})

describe('texture_optimize on generated models', () => {
  it('encodes a texture shared by two materials once; normal maps stay lossless; alpha stays', async () => {
    const base = await testImage(256, 'png')
    const normal = await testNormalMap(256)
    const withAlpha = await testImage(128, 'png', { alpha: true })
    const glb = await texturedGlb(platform, [{ baseColor: base, normal }, { baseColor: base }, { baseColor: withAlpha }])
    const result = success(
      await pool.run({ name: 'texture_optimize', input: { bytes: glb }, format: 'glb', options: { format: 'jpeg', quality: 70 } }),
    )
    const output = await platform.io.readBinary(result.bytes!)
    const [m0, m1, m2] = output.getRoot().listMaterials()
    expect(output.getRoot().listTextures().length).toBe(3)
    expect(m0!.getBaseColorTexture()).toBe(m1!.getBaseColorTexture())
    expect(m0!.getBaseColorTexture()!.getMimeType()).toBe('image/jpeg')
    expect(m0!.getNormalTexture()!.getMimeType()).toBe('image/png')
    expect(m2!.getBaseColorTexture()!.getMimeType()).toBe('image/png')
    const alpha = await sharp(m2!.getBaseColorTexture()!.getImage()!).stats()
    expect(alpha.isOpaque).toBe(false)
    const notes = (result.details as { textures: { note?: string }[] }).textures.map((t) => t.note)
    expect(notes).toEqual([undefined, 'normal map kept lossless (PNG)', 'alpha channel kept (PNG)'])
    // Lossless means lossless: the normal map's pixels are untouched.
    const [a, b] = await Promise.all([sharp(normal).raw().toBuffer(), sharp(m0!.getNormalTexture()!.getImage()!).raw().toBuffer()])
    expect(b.equals(a)).toBe(true)
  })

  it('lossy_normal_maps: true encodes normal maps like the other textures', async () => {
    const normal = await testNormalMap(256)
    const glb = await texturedGlb(platform, [{ baseColor: await testImage(64, 'png'), normal }])
    const run = async (options: Record<string, unknown>) => {
      const result = success(await pool.run({ name: 'texture_optimize', input: { bytes: glb.slice() }, format: 'glb', options }))
      return (await platform.io.readBinary(result.bytes!)).getRoot().listMaterials()[0]!.getNormalTexture()!
    }
    expect((await run({ format: 'jpeg', quality: 70, lossy_normal_maps: false })).getMimeType()).toBe('image/png')
    const lossy = await run({ format: 'jpeg', quality: 70, lossy_normal_maps: true })
    expect(lossy.getMimeType()).toBe('image/jpeg')
    const [a, b] = await Promise.all([sharp(normal).raw().toBuffer(), sharp(lossy.getImage()!).raw().toBuffer()])
    expect(b.equals(a)).toBe(false)
  })

  it('gives renamed textures the new extension, without collisions', async () => {
    const doc = new Document()
    const png = await testImage(32, 'png')
    const jpeg = await testImage(32, 'jpeg')
    const a = doc.createTexture('a').setImage(png).setMimeType('image/png').setURI('textures/wood.png')
    const b = doc.createTexture('b').setImage(jpeg).setMimeType('image/jpeg').setURI('textures/wood.jpg')
    await doc.transform(textureOptimize({ encoder: sharp, format: 'webp' }))
    expect([a.getURI(), b.getURI()]).toEqual(['textures/wood.webp', 'textures/wood-1.webp'])
  })

  it('refuses a decompression bomb inside a model before decoding it', async () => {
    const glb = await texturedGlb(platform, [{ baseColor: bombPng() }])
    const result = await pool.run({ name: 'texture_optimize', input: { bytes: glb }, format: 'glb', options: { format: 'webp' } })
    expect(result).toEqual({ ok: false, message: expect.stringContaining('declares 100000×100000 pixels') })
  })
})

describe('texture_optimize on standalone images', () => {
  for (const [from, to] of [
    ['png', 'webp'],
    ['png', 'jpeg'],
    ['jpeg', 'webp'],
    ['webp', 'png'],
  ] as const) {
    it(`1024² ${from} → ${to}`, async () => {
      const bytes = await testImage(1024, from)
      const extension = from === 'jpeg' ? 'jpg' : from
      const result = success(
        await pool.run({ name: 'texture_optimize', input: { bytes: bytes.slice() }, format: extension, options: { format: to } }),
      )
      expect(result.extension).toBe(to === 'jpeg' ? 'jpg' : to)
      const meta = await sharp(result.bytes!).metadata()
      expect([meta.format, meta.width, meta.height]).toEqual([to, 1024, 1024])
      const details = result.details as { textures: { before: number; after: number }[] }
      expect(details.textures[0]).toMatchObject({ before: bytes.byteLength, after: result.size })
    })
  }

  it('PNG compression level: 9 is no larger than 1', async () => {
    const bytes = await testImage(512, 'png')
    const sizes = []
    for (const quality of [1, 9]) {
      sizes.push(
        success(
          await pool.run({ name: 'texture_optimize', input: { bytes: bytes.slice() }, format: 'png', options: { format: 'png', quality } }),
        ).size,
      )
    }
    expect(sizes[1]).toBeLessThanOrEqual(sizes[0]!)
  })

  it('a 64-byte PNG declaring 100000×100000 pixels fails cleanly, and the pool keeps working', async () => {
    const bomb = bombPng()
    expect(bomb.byteLength).toBe(64)
    const result = await pool.run({ name: 'texture_optimize', input: { bytes: bomb }, format: 'png', options: { format: 'webp' } })
    expect(result).toEqual({
      ok: false,
      message: 'image declares 100000×100000 pixels, over the limit of 67108864 pixels (refused before decoding)',
    })
    const good = await pool.run({
      name: 'texture_optimize',
      input: { bytes: await testImage(64, 'png') },
      format: 'png',
      options: { format: 'webp' },
    })
    expect(good.ok).toBe(true)
  })

  it('options the routes would refuse fail with a message, not a sharp error', async () => {
    const png = await testImage(16, 'png')
    const run = (options: Record<string, unknown>) =>
      pool.run({ name: 'texture_optimize', input: { bytes: png.slice() }, format: 'png', options })
    expect(await run({ format: 'gif' })).toEqual({ ok: false, message: 'texture format must be jpeg, webp or png, not gif' })
    expect(await run({ format: 'png', quality: 10 })).toEqual({ ok: false, message: 'png quality must be an integer from 1 to 9, not 10' })
  })

  it('an image that is not one fails with a decode message', async () => {
    const bytes = new Uint8Array(2048).map((_, i) => (i * 7919) % 251)
    const result = await pool.run({ name: 'texture_optimize', input: { bytes }, format: 'png', options: { format: 'webp' } })
    expect(result).toEqual({ ok: false, message: expect.stringMatching(/^image could not be decoded: /) })
  })
})
