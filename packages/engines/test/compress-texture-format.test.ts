import type { Document, Texture } from '@gltf-transform/core'
import { KHR_DF_MODEL_ETC1S, KHR_DF_MODEL_UASTC, read as readKtx2 } from 'ktx-parse'
import sharp from 'sharp'
import { afterAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { readImageHeader } from '../src/io/image-header.ts'
import { resizedPixelsNote } from '../src/ops/resized-pixels.ts'
import { createEnginePool, loadPlatform, type TextureReport } from '../src/index.ts'
import { compressFileWith, glbOf } from './support/compress-file.ts'
import { success } from './support/job-result.ts'
import { meanAbsoluteError, testImage, testNormalMap, texturedGlb } from './texture-fixtures.ts'

const { available, paths } = corpusFiles({
  clearcoat: assimp('glTF2', 'ClearCoat-glTF', 'ClearCoatTest.gltf'),
  box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
  transforms: assimp('glTF2', 'textureTransform', 'TextureTransformTest.gltf'),
})

const pool = createEnginePool({ threads: 2 })
const platform = await loadPlatform()
const compressFile = compressFileWith(pool, platform)
afterAll(() => pool.destroy())

const GEOMETRY = { draco: 'KHR_draco_mesh_compression', meshopt: 'EXT_meshopt_compression' } as const
const REQUIRED = { webp: 'EXT_texture_webp', ktx2: 'KHR_texture_basisu' } as const

/** Width and height of a texture's image, decoded (sharp) or read from its KTX2 container, with the KTX2 codec. */
async function decodedSize(texture: Texture): Promise<{ width: number; height: number; ktx2Model?: number }> {
  const image = texture.getImage()!
  if (texture.getMimeType() === 'image/ktx2') {
    const container = readKtx2(image)
    expect(container.levels.length).toBeGreaterThan(1) // mipmapped
    return { width: container.pixelWidth, height: container.pixelHeight, ktx2Model: container.dataFormatDescriptor[0]!.colorModel }
  }
  const { width, height } = await sharp(image)
    .raw()
    .toBuffer({ resolveWithObject: true })
    .then((decoded) => decoded.info)
  return { width, height }
}

/** The textures of a document by name, with what a material slot says they hold. */
function byName(doc: Document): Map<string, Texture> {
  return new Map(
    doc
      .getRoot()
      .listTextures()
      .map((texture) => [texture.getName(), texture]),
  )
}

/** Whether a WebP file's image chunk is lossless (VP8L), read from its first chunk after the RIFF header or VP8X's. */
function isLosslessWebp(bytes: Uint8Array): boolean {
  const text = Buffer.from(bytes.subarray(0, 64)).toString('latin1')
  return text.includes('VP8L')
}

describe.skipIf(!available)('compress with texture_format: textures re-encoded in the same task', () => {
  // ClearCoatTest: four PNG colour/data textures, a PNG normal map, a JPEG normal map (PlasticWrap), a PNG normal map shared with a clearcoat slot.
  for (const [format, engine] of [
    ['webp', 'draco'],
    ['jpeg', 'meshopt'],
    ['png', 'draco'],
    ['ktx2', 'meshopt'],
  ] as const) {
    it(`${format} with ${engine}: valid, declares what it needs, every texture decodes at its size, normal maps lossless`, async () => {
      const { input, output, bytes, details } = await compressFile(paths.clearcoat, { engine, texture_format: format })
      const used = output
        .getRoot()
        .listExtensionsUsed()
        .map((extension) => extension.extensionName)
      expect(used).toContain(GEOMETRY[engine])
      const required = output
        .getRoot()
        .listExtensionsUsed()
        .filter((extension) => extension.isRequired())
        .map((extension) => extension.extensionName)
      if (format === 'webp' || format === 'ktx2') expect(required).toContain(REQUIRED[format])
      else expect(used.filter((name) => name === 'EXT_texture_webp' || name === 'KHR_texture_basisu')).toEqual([])

      const before = byName(input)
      const after = byName(output)
      expect([...after.keys()].sort()).toEqual([...before.keys()].sort())
      for (const [name, texture] of after) {
        const original = readImageHeader(before.get(name)!.getImage()!)!
        const size = await decodedSize(texture)
        // KTX2 rounds sides up to multiples of 4 (ktx2-size.ts); the others keep the size exactly.
        const round = (side: number) => (format === 'ktx2' ? Math.ceil(side / 4) * 4 : side)
        expect({ name, width: size.width, height: size.height }).toEqual({
          name,
          width: round(original.width),
          height: round(original.height),
        })
      }

      // RibsNormal.png is a lossless normal map: kept lossless (lossless WebP, PNG; UASTC in KTX2).
      const ribs = after.get('RibsNormal')!
      if (format === 'webp') expect(ribs.getMimeType() === 'image/png' || isLosslessWebp(ribs.getImage()!)).toBe(true)
      if (format === 'jpeg' || format === 'png') expect(ribs.getMimeType()).toBe('image/png')
      if (format === 'ktx2') expect((await decodedSize(ribs)).ktx2Model).toBe(KHR_DF_MODEL_UASTC)
      // A colour texture in KTX2 is ETC1S (texture_ktx2's default).
      if (format === 'ktx2') expect((await decodedSize(after.get('ClearCoatLabels')!)).ktx2Model).toBe(KHR_DF_MODEL_ETC1S)
      // KTX2 trades file bytes for GPU memory: a larger result is what was asked, as on /textures/ktx2 (no size_rule).
      if (format === 'ktx2') expect(bytes.byteLength).toBeGreaterThan((await glbOf(platform, paths.clearcoat)).byteLength)
      expect(details).not.toHaveProperty('size_rule')

      // The texture operations' report, one per texture, with its byte totals.
      const reports = details.textures as TextureReport[]
      expect(reports.map((report) => report.name.replace(/^texture \d+ "(.*)"$/, '$1')).sort()).toEqual([...before.keys()].sort())
      const sum = (key: 'before' | 'after') => reports.reduce((total, report) => total + report[key], 0)
      expect(details).toMatchObject({ texture_bytes_before: sum('before'), texture_bytes_after: sum('after') })
      if (format !== 'ktx2') {
        // Never larger than the texture's smallest lossless coding, which compress without texture_format writes.
        const plain = byName((await compressFile(paths.clearcoat, { engine })).output)
        for (const [name, texture] of after)
          expect(texture.getImage()!.byteLength, name).toBeLessThanOrEqual(plain.get(name)!.getImage()!.byteLength)
      }
      const notes = (details.notes ?? []) as string[]
      if (format === 'webp' || format === 'ktx2')
        expect(notes.join('\n')).toContain(`declared with ${REQUIRED[format]} as a required extension`)
    }, 120_000)
  }

  it('texture_quality sets the JPEG/WebP quality: quality 30 is smaller than the default 82, on a photo-like texture', async () => {
    const glb = await texturedGlb(platform, [{ baseColor: await testImage(512, 'jpeg') }])
    const sizes: number[] = []
    for (const quality of [{ texture_quality: 30 }, {}]) {
      const options = { engine: 'meshopt', texture_format: 'webp', ...quality }
      const result = success(await pool.run({ name: 'compress', input: { bytes: glb.slice() }, format: 'glb', options }))
      expect(result.details).toMatchObject({ textures: [{ from: 'image/jpeg', to: 'image/webp' }] })
      sizes.push(result.details!.texture_bytes_after as number)
    }
    expect(sizes[0]).toBeLessThan(sizes[1]!)
  })

  it('lossy_normal_maps with ktx2: the PNG normal map becomes ETC1S, as the colour textures', async () => {
    const ktx2 = await compressFile(paths.clearcoat, { engine: 'draco', texture_format: 'ktx2', lossy_normal_maps: true })
    expect((await decodedSize(byName(ktx2.output).get('RibsNormal')!)).ktx2Model).toBe(KHR_DF_MODEL_ETC1S)
  }, 120_000)

  it("a texture over the tier's texture size limit fails the task, naming the texture (as the texture operations do)", async () => {
    const glb = await glbOf(platform, paths.clearcoat)
    const options = { engine: 'draco', texture_format: 'webp', maxTextureBytes: 100_000 }
    const result = await pool.run({ name: 'compress', input: { bytes: glb }, format: 'glb', options })
    expect(result).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^texture \d+ "PlasticWrap_normals" is 0\.\d+ MB, over the texture size limit of 0\.0954 MB/),
    })
  })

  it('with texture_max_size, textures are resized first, then re-encoded at that size', async () => {
    const { output, details } = await compressFile(paths.transforms, { engine: 'meshopt', texture_format: 'webp', texture_max_size: 64 })
    for (const texture of output.getRoot().listTextures()) {
      const size = await decodedSize(texture)
      expect(Math.max(size.width, size.height)).toBeLessThanOrEqual(64)
      expect(texture.getMimeType()).toBe('image/webp')
    }
    expect(details.textures_resized).toBeDefined()
  })

  it('with texture_max_size, a JPEG normal map is lossy-encoded once: WebP from the resized pixels, no larger than the resize alone writes', async () => {
    const resize = { engine: 'draco', texture_max_size: 512 }
    const { input, output, details } = await compressFile(paths.clearcoat, { ...resize, texture_format: 'webp' })
    const plain = await compressFile(paths.clearcoat, resize)
    const name = 'PlasticWrap_normals'
    const webp = byName(output).get(name)!
    expect(webp.getMimeType()).toBe('image/webp')
    // One step: the 1024² JPEG resized and encoded as a lossy normal map is (WebP at quality 95).
    const resized = sharp(byName(input).get(name)!.getImage()!).resize({ width: 512, height: 512, fit: 'fill' })
    const oneStep = await resized.clone().webp({ quality: 95, effort: 4 }).toBuffer()
    expect((await sharp(webp.getImage()!).raw().toBuffer()).equals(await sharp(oneStep).raw().toBuffer()), 'the same pixels').toBe(true)
    const reference = await resized.clone().raw().toBuffer()
    const twoSteps = await sharp(await resized.clone().jpeg({ quality: 90, mozjpeg: true }).toBuffer())
      .webp({ quality: 95, effort: 4 })
      .toBuffer()
    expect(await meanAbsoluteError(webp.getImage()!, reference)).toBeLessThan(await meanAbsoluteError(twoSteps, reference))
    expect(webp.getImage()!.byteLength).toBeLessThanOrEqual(byName(plain.output).get(name)!.getImage()!.byteLength)
    const report = (details.textures as TextureReport[]).find((texture) => texture.name.includes(name))!
    expect(report.note).toBe(`lossy normal map kept lossy (WebP at quality 95); ${resizedPixelsNote('image/jpeg')}`)
  })
})

describe('compress with texture_format on generated textures', () => {
  const normalMapped = async () => texturedGlb(platform, [{ baseColor: await testImage(256, 'png'), normal: await testNormalMap(256) }])
  const run = async (glb: Uint8Array, options: Record<string, unknown>) => {
    const result = success(await pool.run({ name: 'compress', input: { bytes: glb.slice() }, format: 'glb', options }))
    const doc = await platform.io.readBinary(result.bytes!)
    return { doc, details: result.details!, normalMap: doc.getRoot().listMaterials()[0]!.getNormalTexture()! }
  }

  it('a normal map stays lossless WebP, its pixels exact; lossy_normal_maps makes it lossy WebP like the rest', async () => {
    const glb = await normalMapped()
    const normal = await testNormalMap(256)
    const kept = await run(glb, { engine: 'meshopt', texture_format: 'webp' })
    expect(
      kept.doc
        .getRoot()
        .listTextures()
        .map((texture) => texture.getMimeType()),
    ).toEqual(['image/webp', 'image/webp'])
    expect(isLosslessWebp(kept.normalMap.getImage()!)).toBe(true)
    expect(await sharp(kept.normalMap.getImage()!).raw().toBuffer()).toEqual(await sharp(normal).raw().toBuffer())
    const reports = kept.details.textures as TextureReport[]
    expect(reports.find((report) => report.slots?.includes('normalTexture'))?.note).toBe('normal map kept lossless (lossless WebP)')

    const lossy = await run(glb, { engine: 'meshopt', texture_format: 'webp', lossy_normal_maps: true })
    expect(lossy.normalMap.getMimeType()).toBe('image/webp')
    expect(isLosslessWebp(lossy.normalMap.getImage()!)).toBe(false)
  })
})
