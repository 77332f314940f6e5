import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Texture } from '@gltf-transform/core'
import { strToU8, unzipSync, zipSync } from 'fflate'
import sharp from 'sharp'
import { describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { decodeTga, type RgbaImage } from '../src/io/tga.ts'
import { basisDecoded, ddsFile, uastcAsBc7 } from './support/dds-files.ts'
import { baseColourTextures, poolReadingBack } from './support/fidelity-readback.ts'
import { imageMagickFile, pixelError } from './support/image-magick.ts'

/**
 * DDS and PSD textures of real models of the assimp corpus (spider.obj's .mtl, duck.dae), written by
 * ImageMagick from the corpus's own textures: each must reach the output as a PNG of the file's pixels,
 * in its slot, with no warning; a BC6H DDS and a cut-short one are named, and the model still converts.
 */
const { available, paths } = corpusFiles({
  duck: assimp('Collada', 'duck.dae'),
  duckTga: assimp('Collada', 'duckCM.tga'),
  spiderObj: assimp('OBJ', 'spider.obj'),
  spiderMtl: assimp('OBJ', 'spider.mtl'),
  spiderTex: assimp('OBJ', 'SpiderTex.jpg'),
  wal69: assimp('OBJ', 'wal69ar_small.jpg'),
  box1: assimp('glTF', 'BoxTextured-glTF'),
})

const file = async (path: string) => new Uint8Array(await readFile(path))

/** A JPEG or PNG (of the corpus, or written) as RGBA pixels (sharp's decoding). */
async function imagePixels(path: string | Buffer): Promise<RgbaImage> {
  const { data, info } = await sharp(path).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
  return { width: info.width, height: info.height, data: new Uint8Array(data) }
}

/** A written texture's pixels, after checking it is a PNG. */
async function pngImage(texture: Texture | null | undefined): Promise<RgbaImage> {
  expect(texture?.getMimeType()).toBe('image/png')
  const { data, info } = await sharp(texture!.getImage()!).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
  return { width: info.width, height: info.height, data: new Uint8Array(data) }
}

describe.skipIf(!available)('companion images: DDS and PSD textures become PNGs of their pixels, what cannot is named', async () => {
  const { run, readValid } = await poolReadingBack()

  it('OBJ whose .mtl names a DXT5 DDS and an RLE PSD: both PNGs of their pixels, to glb and gltf, nothing dropped', async () => {
    const spider = await imagePixels(paths.spiderTex)
    const wall = await imagePixels(paths.wal69)
    const mtl = (await readFile(paths.spiderMtl, 'utf8'))
      .replace('map_Kd .\\SpiderTex.jpg', 'map_Kd .\\SpiderTex.dds')
      .replace('map_Kd .\\wal67ar_small.jpg', 'map_Kd textures\\wal67ar_small.psd')
    const dds = await imageMagickFile(spider, ['-define', 'dds:compression=dxt5'], 'dds')
    const zip = zipSync({
      'spider/spider.obj': await file(paths.spiderObj),
      'spider/spider.mtl': strToU8(mtl),
      'spider/SpiderTex.dds': dds,
      'spider/textures/wal67ar_small.psd': await imageMagickFile(wall, ['-alpha', 'off', '-compress', 'rle'], 'psd'),
      'spider/wal69ar_small.jpg': await file(paths.wal69),
      'spider/drkwood2.jpg': await file(paths.wal69),
    })
    for (const target of ['glb', 'gltf']) {
      const result = await run('convert', zip, 'zip', { target_format: target })
      // engineflare1.jpg is not in the corpus: the one texture left out.
      expect(result.details?.warnings, target).toEqual(['[obj] texture ".\\engineflare1.jpg" is not in the upload; dropped'])
      const textures = baseColourTextures(await readValid(result.bytes!, result.extension!))
      const fromDds = await pngImage(textures.get('HLeibTex'))
      expect([fromDds.width, fromDds.height]).toEqual([spider.width, spider.height])
      // The file's pixels as Binomial's decoder reads them (BC1–BC3 rounding differs by up to 2 levels between decoders), and
      // near the photograph it was made from: DXT5 is lossy (measured mean 3.5 over RGBA, max 118 on its sharpest edge).
      expect(pixelError(fromDds, await basisDecoded(dds)).max).toBeLessThanOrEqual(2)
      const error = pixelError(fromDds, spider)
      expect(error.mean).toBeLessThan(5)
      expect(error.max).toBeLessThan(128)
      expect(pixelError(await pngImage(textures.get('Skin')), wall)).toEqual({ mean: 0, max: 0 })
      if (target === 'gltf')
        expect(Object.keys(unzipSync(result.bytes!))).toEqual(expect.arrayContaining(['SpiderTex.png', 'wal67ar_small.png']))
    }
  })

  it('OBJ whose .mtl names a BC6H DDS, a cut-short one and a BC5 normal map: each named, the model converted with its other textures', async () => {
    const dxt5 = await imageMagickFile(await imagePixels(paths.wal69), ['-define', 'dds:compression=dxt5'], 'dds')
    const mtl = (await readFile(paths.spiderMtl, 'utf8'))
      .replace('map_Kd .\\SpiderTex.jpg', 'map_Kd .\\SpiderTex.dds\nnorm rock_n.dds')
      .replace('map_Kd .\\drkwood2.jpg', 'map_Kd .\\drkwood2.dds')
    const zip = zipSync({
      'spider/spider.obj': await file(paths.spiderObj),
      'spider/spider.mtl': strToU8(mtl),
      'spider/SpiderTex.dds': ddsFile({ width: 4, height: 4, dxgi: 95 }, new Uint8Array(16)),
      'spider/drkwood2.dds': dxt5.subarray(0, dxt5.byteLength / 2),
      // A BC5 normal map of one 4 × 4 block: x and y 128 (0), so z is 1 (blue 255).
      'spider/rock_n.dds': ddsFile(
        { width: 4, height: 4, dxgi: 83 },
        Uint8Array.from([128, 128, 0, 0, 0, 0, 0, 0, 128, 128, 0, 0, 0, 0, 0, 0]),
      ),
      'spider/wal69ar_small.jpg': await file(paths.wal69),
    })
    const result = await run('convert', zip, 'zip', { target_format: 'glb' })
    expect(result.details?.warnings).toEqual([
      '[obj] texture ".\\wal67ar_small.jpg" is not in the upload; dropped',
      '[obj] texture ".\\SpiderTex.dds" is a DDS image in BC6H (HDR), which Mos cannot convert to PNG, JPEG, WebP or KTX2; dropped',
      '[obj] texture "rock_n.dds" is a two-channel (BC5) normal map: kept as a PNG, its blue channel rebuilt as sqrt(1 − x² − y²)',
      '[obj] texture ".\\drkwood2.dds" is a DDS image, which Mos could not decode (damaged, or over 8192×8192 pixels); dropped',
      '[obj] texture ".\\engineflare1.jpg" is not in the upload; dropped',
    ])
    const doc = await readValid(result.bytes!, 'glb')
    const textures = baseColourTextures(doc)
    expect(textures.get('HLeibTex')).toBeNull()
    const normal = await pngImage(
      doc
        .getRoot()
        .listMaterials()
        .find((m) => m.getName() === 'HLeibTex')
        ?.getNormalTexture(),
    )
    expect([normal.width, normal.height, ...normal.data.subarray(0, 4)]).toEqual([4, 4, 128, 128, 255, 255])
    expect(textures.get('BeinTex')).toBeNull()
    const kept = textures.get('Brusttex')!
    expect(kept.getMimeType()).toBe('image/jpeg')
    expect(pixelError(await imagePixels(Buffer.from(kept.getImage()!)), await imagePixels(paths.wal69))).toEqual({ mean: 0, max: 0 })
  })

  it('glTF 1.0 whose image is a BC7 DDS: its pixels as the PNG base colour, nothing dropped', async () => {
    const files: Record<string, Uint8Array> = {}
    for (const name of await readdir(paths.box1)) files[name] = await file(join(paths.box1, name))
    const logo = await imagePixels(join(paths.box1, 'CesiumLogoFlat.png'))
    files['BoxTextured.gltf'] = strToU8(
      new TextDecoder().decode(files['BoxTextured.gltf']).replace('"CesiumLogoFlat.png"', '"CesiumLogoFlat.dds"'),
    )
    const { blocks } = await uastcAsBc7(logo)
    const dds = ddsFile({ width: logo.width, height: logo.height, dxgi: 99 }, blocks)
    files['CesiumLogoFlat.dds'] = dds
    delete files['CesiumLogoFlat.png']
    const result = await run('convert', zipSync(files), 'zip', { target_format: 'glb' })
    // The one warning is glTF 1.0's own: nothing about the image.
    expect(result.details?.warnings).toEqual([expect.stringMatching(/^\[gltf 1\.0\] 1 technique \(GLSL shaders\) not carried/)])
    const texture = (await readValid(result.bytes!, 'glb')).getRoot().listMaterials()[0]!.getBaseColorTexture()
    const png = await pngImage(texture)
    expect(pixelError(png, await basisDecoded(dds))).toEqual({ mean: 0, max: 0 })
    expect(pixelError(png, logo).mean).toBeLessThan(2)
  })

  it('COLLADA (through assimp) whose texture is a 16-bit PSD or an uncompressed DDS: the TGA it was made from, every pixel', async () => {
    const duck = decodeTga(await file(paths.duckTga))!
    for (const [name, image] of [
      ['duckCM.psd', await imageMagickFile(duck, ['-alpha', 'off', '-depth', '16', '-compress', 'rle'], 'psd')],
      ['duckCM.dds', await imageMagickFile(duck, ['-alpha', 'off', '-define', 'dds:compression=none'], 'dds')],
    ] as const) {
      const dae = (await readFile(paths.duck, 'utf8')).replace('<init_from>./duckCM.tga</init_from>', `<init_from>./${name}</init_from>`)
      const result = await run('convert', zipSync({ 'duck.dae': strToU8(dae), [name]: image }), 'zip', { target_format: 'glb' })
      expect(result.details?.warnings, name).toBeUndefined()
      const doc = await readValid(result.bytes!, 'glb')
      const texture = doc.getRoot().listMaterials()[0]!.getBaseColorTexture()
      expect(pixelError(await pngImage(texture), duck), name).toEqual({ mean: 0, max: 0 })
    }
  })
})
