import { readFile } from 'node:fs/promises'
import type { Texture } from '@gltf-transform/core'
import {
  KHR_DF_MODEL_ETC1S,
  KHR_DF_MODEL_UASTC,
  KHR_DF_TRANSFER_LINEAR,
  KHR_DF_TRANSFER_SRGB,
  KHR_SUPERCOMPRESSION_BASISLZ,
  KHR_SUPERCOMPRESSION_ZSTD,
  read,
} from 'ktx-parse'
import sharp from 'sharp'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import { encodeBasisKtx2, loadBasisEncoder } from '../src/basis-encoder.ts'
import { createEnginePool, loadPlatform, writableFormats } from '../src/index.ts'
import { success } from './support/job-result.ts'
import { bombPng, testImage, testNormalMap, texturedGlb, validateGlb } from './texture-fixtures.ts'

const { available, paths } = corpusFiles({
  knight: shared('glb', 'chr_knight.glb'),
  box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
  boxEmbedded: assimp('glTF2', 'BoxTextured-glTF-Embedded', 'BoxTextured.gltf'),
})

const pool = createEnginePool({ threads: 2 })
const platform = await loadPlatform()
afterAll(() => pool.destroy())

/** The facts of a KTX2 file the tests check: codec, supercompression, transfer function, levels. */
function ktx2Facts(bytes: Uint8Array) {
  const container = read(bytes)
  const dfd = container.dataFormatDescriptor[0]!
  return {
    width: container.pixelWidth,
    height: container.pixelHeight,
    levels: container.levels.length,
    colorModel: dfd.colorModel,
    transfer: dfd.transferFunction,
    supercompression: container.supercompressionScheme,
  }
}

const ETC1S = { colorModel: KHR_DF_MODEL_ETC1S, supercompression: KHR_SUPERCOMPRESSION_BASISLZ }
const UASTC = { colorModel: KHR_DF_MODEL_UASTC, supercompression: KHR_SUPERCOMPRESSION_ZSTD }

describe('texture_ktx2 on standalone images', () => {
  it('1024² PNG → ETC1S: BasisLZ, sRGB, full mip chain', async () => {
    const png = await testImage(1024, 'png')
    const result = success(
      await pool.run({ name: 'texture_ktx2', input: { bytes: png.slice() }, format: 'png', options: { uastc: false, quality: 128 } }),
    )
    expect(result.extension).toBe('ktx2')
    expect(ktx2Facts(result.bytes!)).toEqual({ width: 1024, height: 1024, levels: 11, transfer: KHR_DF_TRANSFER_SRGB, ...ETC1S })
    expect(result.size).toBeLessThan(png.byteLength)
    expect(result.details).toMatchObject({ textures: [{ before: png.byteLength, after: result.size, mode: 'etc1s', colorSpace: 'srgb' }] })
    expect(result.details).not.toHaveProperty('notes')
    expect(result.details).not.toHaveProperty('textures.0.resizedFrom')
  })

  it('256² JPEG → UASTC: colour model 166, Zstandard, full mip chain', async () => {
    const jpeg = await testImage(256, 'jpeg')
    const result = success(
      await pool.run({ name: 'texture_ktx2', input: { bytes: jpeg }, format: 'jpg', options: { uastc: true, quality: 1 } }),
    )
    expect(ktx2Facts(result.bytes!)).toEqual({ width: 256, height: 256, levels: 9, transfer: KHR_DF_TRANSFER_SRGB, ...UASTC })
  })

  it('sides are rounded up to multiples of 4 for the GPU block formats, and the notes name both sizes (1×1, 250×130 with alpha)', async () => {
    for (const [width, height, written, levels] of [
      [1, 1, [4, 4], 3],
      [250, 130, [252, 132], 8],
    ] as const) {
      const png = new Uint8Array(
        await sharp({ create: { width, height, channels: 4, background: { r: 200, g: 20, b: 90, alpha: 0.5 } } })
          .png()
          .toBuffer(),
      )
      const result = success(await pool.run({ name: 'texture_ktx2', input: { bytes: png }, format: 'png', options: {} }))
      expect(ktx2Facts(result.bytes!)).toMatchObject({ width: written[0], height: written[1], levels, ...ETC1S })
      expect(result.details).toMatchObject({
        width: written[0],
        height: written[1],
        textures: [{ resizedFrom: [width, height], size: written }],
        notes: [
          `image encoded to KTX2 at ${written[0]}×${written[1]}, not its ${width}×${height}: the GPU formats KTX2 transcodes to (BC7, ETC, ASTC) store 4×4 blocks, and WebGL and WebGPU need sides that are multiples of 4`,
        ],
      })
    }
  })

  it('ETC1S quality moves the size: 255 is larger than 1', async () => {
    const png = await testImage(256, 'png')
    const sizes = []
    for (const quality of [1, 255]) {
      sizes.push(
        success(await pool.run({ name: 'texture_ktx2', input: { bytes: png.slice() }, format: 'png', options: { uastc: false, quality } }))
          .size,
      )
    }
    expect(sizes[1]).toBeGreaterThan(sizes[0]!)
  })

  it('a quality out of the mode’s range fails with a message', async () => {
    const result = await pool.run({
      name: 'texture_ktx2',
      input: { bytes: await testImage(16, 'png') },
      format: 'png',
      options: { uastc: true, quality: 128 },
    })
    expect(result).toEqual({ ok: false, message: 'UASTC quality must be an integer from 0 to 4, not 128' })
  })

  it('a 64-byte PNG declaring 100000×100000 pixels fails cleanly before decoding', async () => {
    const result = await pool.run({ name: 'texture_ktx2', input: { bytes: bombPng() }, format: 'png', options: {} })
    expect(result).toEqual({ ok: false, message: expect.stringContaining('declares 100000×100000 pixels') })
  })

  it('the encoder prints nothing (its status lines would land in the service log)', async () => {
    const basis = await loadBasisEncoder()
    const { data } = await sharp(await testImage(64, 'png'))
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true })
    const stdout = vi.spyOn(process.stdout, 'write')
    const log = vi.spyOn(console, 'log')
    try {
      const bytes = encodeBasisKtx2(basis, new Uint8Array(data), 64, 64, { uastc: false, quality: 128, srgb: true })
      expect(read(bytes).levels.length).toBe(7)
      expect(stdout).not.toHaveBeenCalled()
      expect(log).not.toHaveBeenCalled()
    } finally {
      stdout.mockRestore()
      log.mockRestore()
    }
  })
})

describe('texture_ktx2 on models', () => {
  it('colour slots sRGB, data slots linear, normal maps UASTC; slots keep their textures', async () => {
    const [base, normal, mr, emissive] = await Promise.all([
      testImage(256, 'png'),
      testNormalMap(256),
      testImage(128, 'jpeg'),
      testImage(128, 'png'),
    ])
    const glb = await texturedGlb(platform, [
      { baseColor: base, normal, metallicRoughness: mr, occlusion: mr, emissive },
      { baseColor: base },
    ])
    const result = success(
      await pool.run({ name: 'texture_ktx2', input: { bytes: glb }, format: 'glb', options: { uastc: false, quality: 128 } }),
    )
    const output = await platform.io.readBinary(result.bytes!)
    expect(
      output
        .getRoot()
        .listExtensionsRequired()
        .map((e) => e.extensionName),
    ).toContain('KHR_texture_basisu')
    const [m0, m1] = output.getRoot().listMaterials()
    expect(m1!.getBaseColorTexture()).toBe(m0!.getBaseColorTexture())
    const facts = (texture: Texture | null) => {
      expect(texture?.getMimeType()).toBe('image/ktx2')
      return ktx2Facts(texture!.getImage()!)
    }
    expect(facts(m0!.getBaseColorTexture())).toMatchObject({ transfer: KHR_DF_TRANSFER_SRGB, levels: 9, ...ETC1S })
    expect(facts(m0!.getEmissiveTexture())).toMatchObject({ transfer: KHR_DF_TRANSFER_SRGB, levels: 8, ...ETC1S })
    expect(facts(m0!.getNormalTexture())).toMatchObject({ transfer: KHR_DF_TRANSFER_LINEAR, levels: 9, ...UASTC })
    // Metallic-roughness and occlusion share one texture here: linear either way.
    expect(m0!.getOcclusionTexture()).toBe(m0!.getMetallicRoughnessTexture())
    expect(facts(m0!.getMetallicRoughnessTexture())).toMatchObject({ transfer: KHR_DF_TRANSFER_LINEAR, ...ETC1S })
    const details = result.details as {
      textures: { colorSpace: string; mode: string }[]
      texture_bytes_before: number
      texture_bytes_after: number
    }
    expect(details.textures.map((t) => [t.mode, t.colorSpace])).toEqual([
      ['etc1s', 'srgb'],
      ['uastc', 'linear'],
      ['etc1s', 'linear'],
      ['etc1s', 'srgb'],
    ])
    expect(details.texture_bytes_before).toBe(base.byteLength + normal.byteLength + mr.byteLength + emissive.byteLength)
    expect((await validateGlb(result.bytes!)).errors).toEqual([])
  })

  it('refuses a decompression bomb texture cleanly', async () => {
    const glb = await texturedGlb(platform, [{ baseColor: bombPng() }])
    const result = await pool.run({ name: 'texture_ktx2', input: { bytes: glb }, format: 'glb', options: {} })
    expect(result).toEqual({ ok: false, message: expect.stringContaining('declares 100000×100000 pixels') })
  })
})

describe.skipIf(!available)('texture_ktx2 on real models', () => {
  for (const [model, uastc] of [
    ['box', false],
    ['knight', true],
  ] as const) {
    it(`${model} → ${uastc ? 'UASTC' : 'ETC1S'}: image/ktx2 under a required KHR_texture_basisu, valid glTF`, async () => {
      const input = await platform.io.readBinary(new Uint8Array(await readFile(paths[model])))
      const result = success(await pool.run({ name: 'texture_ktx2', input: { path: paths[model] }, format: 'glb', options: { uastc } }))
      const output = await platform.io.readBinary(result.bytes!)
      expect(
        output
          .getRoot()
          .listExtensionsRequired()
          .map((e) => e.extensionName),
      ).toContain('KHR_texture_basisu')
      // BoxTextured's logo is 211×211 and the knight's palette 256×1: each side rounded up to a multiple of 4, and said.
      const notes: string[] = []
      for (const [i, texture] of output.getRoot().listTextures().entries()) {
        expect(texture.getMimeType()).toBe('image/ktx2')
        const before = await sharp(input.getRoot().listTextures()[i]!.getImage()!).metadata()
        const [width, height] = [Math.ceil(before.width / 4) * 4, Math.ceil(before.height / 4) * 4]
        expect([before.width, before.height]).not.toEqual([width, height])
        expect(ktx2Facts(texture.getImage()!)).toMatchObject({ width, height, ...(uastc ? UASTC : ETC1S) })
        notes.push(
          expect.stringMatching(
            new RegExp(`^texture ${i}( "[^"]*")? encoded to KTX2 at ${width}×${height}, not its ${before.width}×${before.height}: `),
          ),
        )
      }
      expect(result.details?.notes).toEqual(notes)
      for (const material of output.getRoot().listMaterials()) expect(material.getBaseColorTexture()?.getMimeType()).toBe('image/ktx2')
      expect((await validateGlb(result.bytes!)).errors).toEqual([])
    })
  }

  it('a WebP-textured model (texture_optimize output) → KTX2: EXT_texture_webp gone, KHR_texture_basisu required', async () => {
    const webp = success(
      await pool.run({ name: 'texture_optimize', input: { path: paths.box }, format: 'glb', options: { format: 'webp' } }),
    )
    const result = success(await pool.run({ name: 'texture_ktx2', input: { bytes: webp.bytes! }, format: 'glb', options: {} }))
    const output = await platform.io.readBinary(result.bytes!)
    const used = output
      .getRoot()
      .listExtensionsUsed()
      .map((e) => e.extensionName)
    expect(used).toContain('KHR_texture_basisu')
    expect(used).not.toContain('EXT_texture_webp')
    expect(ktx2Facts(output.getRoot().listTextures()[0]!.getImage()!)).toMatchObject({ transfer: KHR_DF_TRANSFER_SRGB, ...ETC1S })
  })

  it('a KTX2 model again, or to WebP: its texture left as it was, named with why in the notes', async () => {
    const ktx2 = success(await pool.run({ name: 'texture_ktx2', input: { path: paths.box }, format: 'glb', options: {} }))
    const again = success(await pool.run({ name: 'texture_ktx2', input: { bytes: ktx2.bytes!.slice() }, format: 'glb', options: {} }))
    expect(again.details).toMatchObject({ textures: [{ skipped: 'already KTX2' }], notes: ['texture 0 left as it was: already KTX2'] })
    const webp = success(
      await pool.run({ name: 'texture_optimize', input: { bytes: ktx2.bytes!.slice() }, format: 'glb', options: { format: 'webp' } }),
    )
    expect(webp.details).toMatchObject({ notes: ['texture 0 left as it was: image/ktx2 is not re-encoded'] })
  })

  it('BoxTextured.gltf (embedded) → KTX2 in the gltf writer’s container, or GLB until there is one', async () => {
    const result = success(
      await pool.run({ name: 'texture_ktx2', input: { path: paths.boxEmbedded }, format: 'gltf', options: { uastc: true } }),
    )
    if (writableFormats().includes('gltf')) {
      expect(result.extension).toBe('zip')
      return
    }
    const output = await platform.io.readBinary(result.bytes!)
    expect(ktx2Facts(output.getRoot().listTextures()[0]!.getImage()!)).toMatchObject(UASTC)
  })
})
