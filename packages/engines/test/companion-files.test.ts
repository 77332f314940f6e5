import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Document } from '@gltf-transform/core'
import { strToU8, unzipSync, zipSync } from 'fflate'
import sharp from 'sharp'
import { afterAll, describe, expect, it } from 'vitest'
import { assimpInfo, hasAssimpCli } from '../../../test/support/assimp-info.ts'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { countSceneTriangles, createEnginePool, loadPlatform } from '../src/index.ts'
import { success } from './support/job-result.ts'

/** Files a model references, zipped with it: COLLADA, OBJ and FBX of the assimp corpus with their textures. */
const { available, paths } = corpusFiles({
  duck: assimp('Collada', 'duck.dae'),
  duckTexture: assimp('Collada', 'duckCM.tga'),
  spiderObj: assimp('OBJ', 'spider.obj'),
  spiderMtl: assimp('OBJ', 'spider.mtl'),
  spiderFbx: assimp('FBX', 'spider.fbx'),
  spiderTex: assimp('OBJ', 'SpiderTex.jpg'),
  drkwood: assimp('OBJ', 'drkwood2.jpg'),
  engineflare: assimp('OBJ', 'engineflare1.jpg'),
  wal67: assimp('OBJ', 'wal67ar_small.jpg'),
  wal69: assimp('OBJ', 'wal69ar_small.jpg'),
  box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
})

const cli = hasAssimpCli()
if (!cli && process.env.REQUIRE_CORPUS === '1') throw new Error('the assimp command is missing (apt-get install assimp-utils)')

/** The images of spider.mtl's materials that spider.obj uses (its "Brusttex", with wal69ar_small.jpg, textures no face). */
const SPIDER_IMAGES = ['SpiderTex.jpg', 'drkwood2.jpg', 'engineflare1.jpg', 'wal67ar_small.jpg']
/** A clean image name: no folders, no leading dot or underscore, one image extension. */
const CLEAN_IMAGE = /^[A-Za-z0-9][\w.-]*(?<!\.(png|jpg))\.(png|jpg)$/

describe.skipIf(!available)('companion files: textures read from zips, OBJ with its .mtl, clean names', async () => {
  const pool = createEnginePool({ threads: 1 })
  const platform = await loadPlatform()
  const dir = await mkdtemp(join(tmpdir(), 'mos-companions-'))
  afterAll(async () => {
    await pool.destroy()
    await rm(dir, { recursive: true, force: true })
  })
  const file = async (path: string) => new Uint8Array(await readFile(path))
  const convert = async (bytes: Uint8Array, format: string, target: string) =>
    // The pool moves the bytes into the worker: send a copy so tests can reuse theirs.
    success(await pool.run({ name: 'convert', input: { bytes: bytes.slice() }, format, options: { target_format: target } }))
  const glbOf = async (bytes: Uint8Array, format: string) => platform.io.readBinary((await convert(bytes, format, 'glb')).bytes!)
  const spiderImages = async () =>
    Object.fromEntries(
      await Promise.all(
        [paths.spiderTex, paths.drkwood, paths.engineflare, paths.wal67, paths.wal69].map(
          async (path) => [path.split('/').pop()!, await file(path)] as const,
        ),
      ),
    )
  /** Texture sizes of a document, sorted: what survives of the images, whatever they are named. */
  const textureSizes = (doc: Document) =>
    doc
      .getRoot()
      .listTextures()
      .map((t) => t.getSize()?.join('x'))
      .sort()

  /** Each primitive's smallest and largest UV, rounded, sorted: independent of vertex order and names. */
  const uvRanges = (doc: Document) =>
    doc
      .getRoot()
      .listMeshes()
      .flatMap((m) => m.listPrimitives())
      .map((p) => {
        const uv = p.getAttribute('TEXCOORD_0')
        return uv ? [...uv.getMin([]), ...uv.getMax([])].map((v) => v.toFixed(3)).join(' ') : ''
      })
      .sort()

  /** Unzips into a fresh folder of `dir` and runs `assimp info --raw` on `model`. */
  const assimpOpens = async (zip: Uint8Array, name: string, model: string) => {
    const folder = join(dir, name)
    await rm(folder, { recursive: true, force: true })
    await mkdir(folder)
    for (const [entry, bytes] of Object.entries(unzipSync(zip))) await writeFile(join(folder, entry), bytes)
    // Raw: assimp's post-processing would turn degenerate triangles into lines and points.
    return assimpInfo(join(folder, model), { raw: true })
  }

  describe('COLLADA: duck.dae with duckCM.tga', () => {
    const duckZip = async (reference: string, entry: string) => {
      const dae = (await readFile(paths.duck, 'utf8')).replace('<init_from>./duckCM.tga</init_from>', `<init_from>${reference}</init_from>`)
      return zipSync({ 'duck/duck.dae': strToU8(dae), [entry]: await file(paths.duckTexture) })
    }

    it.each([
      ['./duckCM.tga', 'duck/duckCM.tga'],
      ['textures\\duckCM.tga', 'duck/textures/DUCKCM.TGA'],
      ['file:///C:/Users/artist/Desktop/duckCM.tga', 'duckCM.tga'],
      ['duck%20CM.tga', 'duck/duck CM.tga'],
    ])('finds <init_from>%s</init_from> as %s: the texture survives as a 512x512 PNG', async (reference, entry) => {
      const doc = await glbOf(await duckZip(reference, entry), 'zip')
      const textures = doc.getRoot().listTextures()
      expect(textures.map((t) => [t.getMimeType(), t.getSize()])).toEqual([['image/png', [512, 512]]])
      expect(doc.getRoot().listMaterials()[0]!.getBaseColorTexture()).toBe(textures[0])
    })

    it('writes a zip with a cleanly named image that assimp opens, and Mos reads its own zip back with the texture', async () => {
      const dae = await convert(await duckZip('./duckCM.tga', 'duck/duckCM.tga'), 'zip', 'dae')
      expect(dae.extension).toBe('zip')
      expect(Object.keys(unzipSync(dae.bytes!)).sort()).toEqual(['duckCM.png', 'model.dae'])
      if (cli) expect((await assimpOpens(dae.bytes!, 'duck-dae', 'model.dae')).textureRefs).toEqual(['duckCM.png'])
      const again = await convert(dae.bytes!, 'zip', 'dae')
      expect(Object.keys(unzipSync(again.bytes!)).sort()).toEqual(['duckCM.png', 'model.dae'])
      const doc = await glbOf(again.bytes!, 'zip')
      expect(textureSizes(doc)).toEqual(['512x512'])
      expect(countSceneTriangles(doc)).toBe(4212)
    })

    it('names an image referenced through folders of the author disk by its file name alone', async () => {
      const written = await convert(await duckZip('../../../Desktop/uv_test.tga', 'uv_test.tga'), 'zip', 'dae')
      expect(Object.keys(unzipSync(written.bytes!)).sort()).toEqual(['model.dae', 'uv_test.png'])
    })

    it('names a texture the zip lacks in the task notes', async () => {
      const result = await convert(zipSync({ 'duck.dae': await file(paths.duck) }), 'zip', 'glb')
      expect(result.details?.warnings).toEqual(['[dae] texture "./duckCM.tga" is not in the upload; dropped'])
    })
  })

  describe('OBJ: spider.obj with spider.mtl and five JPEGs', () => {
    const spiderZip = async () =>
      zipSync({
        'spider/spider.obj': await file(paths.spiderObj),
        'spider/spider.mtl': await file(paths.spiderMtl),
        ...(await spiderImages()),
      })

    it('→ obj is a zip of model.obj, model.mtl and the images, names as referenced; assimp and Mos read it back', async () => {
      const written = await convert(await spiderZip(), 'zip', 'obj')
      const source = await glbOf(await spiderZip(), 'zip')
      expect(written.extension).toBe('zip')
      const entries = unzipSync(written.bytes!)
      expect(Object.keys(entries).sort()).toEqual(['model.mtl', 'model.obj', ...SPIDER_IMAGES].sort())
      // Each image as read, or re-coded losslessly smaller (JPEGs with their own Huffman tables): the same pixels.
      const originals = await spiderImages()
      const pixels = async (bytes: Uint8Array) => sharp(bytes).raw().toBuffer()
      for (const name of SPIDER_IMAGES) {
        expect(entries[name]!.byteLength, name).toBeLessThanOrEqual(originals[name]!.byteLength)
        expect((await pixels(entries[name]!)).equals(await pixels(originals[name]!)), name).toBe(true)
      }
      expect(new TextDecoder().decode(entries['model.obj']!.subarray(0, 40))).toContain('mtllib model.mtl')
      if (cli) {
        const info = await assimpOpens(written.bytes!, 'spider-obj', 'model.obj')
        expect(info.triangles).toBe(countSceneTriangles(source))
        expect([...new Set(info.textureRefs)].sort()).toEqual([...SPIDER_IMAGES].sort())
      }
      const back = await glbOf(written.bytes!, 'zip')
      expect(countSceneTriangles(back)).toBe(countSceneTriangles(source))
      // UVs come back as they were read: v flipped once each way.
      expect(uvRanges(back)).toEqual(uvRanges(source))
      for (const texture of source.getRoot().listTextures()) if (!SPIDER_IMAGES.includes(`${texture.getName()}.jpg`)) texture.dispose()
      expect(textureSizes(back)).toEqual(textureSizes(source))
      expect(textureSizes(back)).toHaveLength(SPIDER_IMAGES.length)
    })

    it('→ dae names its images as the .mtl did, without "._" or a doubled extension', async () => {
      const names = Object.keys(unzipSync((await convert(await spiderZip(), 'zip', 'dae')).bytes!))
      expect(names.sort()).toEqual(['model.dae', ...SPIDER_IMAGES].sort())
      expect(names.filter((n) => n !== 'model.dae').every((n) => CLEAN_IMAGE.test(n))).toBe(true)
    })

    it('→ fbx embeds its images under the .mtl names, and Mos reads them back with their sizes', async () => {
      const fbx = (await convert(await spiderZip(), 'zip', 'fbx')).bytes!
      const names = new Set(new TextDecoder('latin1').decode(fbx).match(/[\w.-]+\.(?:jpg|png)(?=\0|\x01|[^\w.])/g))
      expect([...names].sort()).toEqual([...SPIDER_IMAGES].sort())
      const back = await glbOf(fbx, 'fbx')
      const source = await glbOf(await spiderZip(), 'zip')
      for (const texture of source.getRoot().listTextures()) if (!SPIDER_IMAGES.includes(`${texture.getName()}.jpg`)) texture.dispose()
      expect(textureSizes(back)).toEqual(textureSizes(source))
    })

    it('a bare OBJ whose .mtl is missing keeps its geometry and names the file in the task notes', async () => {
      const result = await convert(await file(paths.spiderObj), 'obj', 'glb')
      expect(countSceneTriangles(await platform.io.readBinary(result.bytes!))).toBe(1368)
      expect(result.details?.warnings).toEqual([
        '[obj] materials file "spider.mtl" is not in the upload: materials keep their names only (upload a zip of the .obj, its .mtl and textures)',
      ])
    })

    it('plain geometry stays a bare .obj', async () => {
      const doc = await glbOf(await file(paths.spiderObj), 'obj')
      for (const material of doc.getRoot().listMaterials()) material.dispose()
      const written = await convert(await platform.io.writeBinary(doc), 'glb', 'obj')
      expect(written.extension).toBe('obj')
      expect(new TextDecoder().decode(written.bytes!)).not.toMatch(/^(mtllib|usemtl) /m)
    })
  })

  describe('FBX: spider.fbx referencing D:\\projects\\...\\OBJ\\*.jpg', () => {
    it('finds its external textures in the zip by file name', async () => {
      const doc = await glbOf(zipSync({ 'spider.fbx': await file(paths.spiderFbx), ...(await spiderImages()) }), 'zip')
      const textures = doc.getRoot().listTextures()
      expect(textures.map((t) => `${t.getName()}.jpg`).sort()).toEqual([...SPIDER_IMAGES].sort())
      expect(textures.every((t) => t.getMimeType() === 'image/jpeg' && t.getSize())).toBe(true)
      expect(
        doc
          .getRoot()
          .listMaterials()
          .filter((m) => m.getBaseColorTexture()).length,
      ).toBeGreaterThanOrEqual(4)
    })
  })

  describe('glTF: a textured model written as OBJ keeps its texture', () => {
    it('BoxTextured.glb → obj zip → glb: the same one texture', async () => {
      const written = await convert(await file(paths.box), 'glb', 'obj')
      const names = Object.keys(unzipSync(written.bytes!))
      expect(names.filter((n) => !n.startsWith('model.')).every((n) => CLEAN_IMAGE.test(n))).toBe(true)
      const sizes = textureSizes(await glbOf(written.bytes!, 'zip'))
      expect(sizes).toHaveLength(1)
      expect(sizes).toEqual(textureSizes(await platform.io.readBinary(await file(paths.box))))
    })
  })
})
