import { readFile } from 'node:fs/promises'
import { Document, type Texture } from '@gltf-transform/core'
import { strToU8, unzipSync, zipSync } from 'fflate'
import sharp from 'sharp'
import { describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { writeFbx } from '../src/io/fbx-writer.ts'
import { readModel } from '../src/io/index.ts'
import { ddsFile } from './support/dds-files.ts'
import { baseColourTextures, poolReadingBack } from './support/fidelity-readback.ts'
import { bmpPixel, tgaPixel } from './support/source-pixels.ts'

/**
 * Textures of other formats than glTF's, referenced by real models of the assimp corpus: TGA and BMP
 * files beside a COLLADA and an OBJ model, a TGA embedded in an FBX. Each must arrive in the output
 * as a PNG (or what the texture operation asks for) with its pixels, in the slot it was in, or be
 * named in the task's warnings.
 */
const { available, paths } = corpusFiles({
  duck: assimp('Collada', 'duck.dae'),
  duckTga: assimp('Collada', 'duckCM.tga'),
  grailTga: assimp('SMD', 'holygrail.tga'),
  faerieBmp: assimp('MD2', 'faerie2.bmp'),
  sydneyBmp: assimp('MD2', 'sydney.bmp'),
  kwxport: assimp('Collada', 'kwxport_test_vcolors.dae'),
  top: assimp('X', 'top.tga'),
  bottom: assimp('X', 'bottom.tga'),
  updown: assimp('X', 'updown.tga'),
  spiderObj: assimp('OBJ', 'spider.obj'),
  spiderMtl: assimp('OBJ', 'spider.mtl'),
  spiderTex: assimp('OBJ', 'SpiderTex.jpg'),
  wal69: assimp('OBJ', 'wal69ar_small.jpg'),
  fbxTga: assimp('FBX', 'box_orphant_embedded_texture.fbx'),
})

const file = async (path: string) => new Uint8Array(await readFile(path))

/** The source's size from its header and, at 25 points over it, the pixels: TGA and BMP alike. */
async function expectSamePixels(texture: Texture | null | undefined, source: Uint8Array): Promise<void> {
  const bmp = source[0] === 0x42 && source[1] === 0x4d
  const view = new DataView(source.buffer, source.byteOffset, source.byteLength)
  const [width, height] = bmp ? [view.getInt32(18, true), view.getInt32(22, true)] : [view.getUint16(12, true), view.getUint16(14, true)]
  expect(texture?.getMimeType()).toBe('image/png')
  const { data, info } = await sharp(texture!.getImage()!).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
  expect([info.width, info.height]).toEqual([width, height])
  for (let y = 0; y < height; y += Math.ceil(height / 5)) {
    for (let x = 0; x < width; x += Math.ceil(width / 5)) {
      const at = (y * width + x) * 4
      expect([...data.subarray(at, at + 4)], `${texture!.getName()} at ${x},${y}`).toEqual((bmp ? bmpPixel : tgaPixel)(source, x, y))
    }
  }
}

/** A DDS of one BC6H block: HDR, which Mos does not convert (the DDS textures it does: companion-dds-psd.test.ts). */
const bc6hDds = () => ddsFile({ width: 4, height: 4, dxgi: 95 }, new Uint8Array(16))

/** duck.dae with a normal map (`<bump>`, a 32-bit TGA in a folder) and an emissive map (an 8-bit BMP) beside its TGA base colour. */
async function duckWithMaps(): Promise<string> {
  const sampler = (id: string) =>
    `<newparam sid="${id}-surface"><surface type="2D"><init_from>${id}</init_from></surface></newparam>` +
    `<newparam sid="${id}-sampler"><sampler2D><source>${id}-surface</source></sampler2D></newparam>`
  return (await readFile(paths.duck, 'utf8'))
    .replace(
      '</library_images>',
      '<image id="grail"><init_from>maps/holygrail.tga</init_from></image><image id="faerie"><init_from>.\\faerie2.bmp</init_from></image></library_images>',
    )
    .replace('<technique sid="common">', `${sampler('grail')}${sampler('faerie')}<technique sid="common">`)
    .replace(/<emission>\s*<color>0 0 0 1<\/color>/, '<emission><texture texture="faerie-sampler" texcoord="TEX0"/>')
    .replace(
      /<\/technique>(\s*)<\/profile_COMMON>/,
      '<extra><technique profile="FCOLLADA"><bump><texture texture="grail-sampler" texcoord="TEX0"/></bump></technique></extra></technique>$1</profile_COMMON>',
    )
}

/** A 24×16 RGBA pattern, each pixel its own colour, alpha varying (0 on one pixel in five): `shift` makes another. */
function pattern(shift = 0): { data: Uint8Array; width: number; height: number } {
  const [width, height] = [24, 16]
  const data = new Uint8Array(width * height * 4)
  for (let i = 0; i < width * height; i++)
    data.set([(i * 10 + shift) & 255, (i * 3) & 255, (255 - i + shift) & 255, i % 5 === 0 ? 0 : 255 - i / 2], i * 4)
  return { data, width, height }
}

const raw = ({ width, height }: { width: number; height: number }) => ({ raw: { width, height, channels: 4 as const } })

/** The pixels of an image file as sharp decodes it (a GIF's first frame), RGBA. */
async function decodedPixels(bytes: Uint8Array): Promise<number[]> {
  return [...(await sharp(bytes, { pages: 1 }).ensureAlpha().raw().toBuffer())]
}

/** The RGBA pixels of a written texture, after checking it is a PNG. */
async function pngPixels(texture: Texture | null | undefined): Promise<number[]> {
  expect(texture?.getMimeType()).toBe('image/png')
  return [...(await sharp(texture!.getImage()!).ensureAlpha().raw().toBuffer())]
}

/** An animated GIF of two frames, the test pattern and the pattern shifted: a reader must keep the first. */
async function twoFrameGif(): Promise<Uint8Array> {
  const frame = (shift: number) =>
    sharp(pattern(shift).data, raw(pattern(shift)))
      .png()
      .toBuffer()
  return new Uint8Array(
    await sharp([await frame(0), await frame(100)], { join: { animated: true } })
      .gif()
      .toBuffer(),
  )
}

describe.skipIf(!available)('companion images: TGA and BMP textures become PNGs in their slots, what cannot is named', async () => {
  const { run, readValid, platform } = await poolReadingBack()
  const material = (doc: Document) => doc.getRoot().listMaterials()[0]!
  const duckZip = async () =>
    zipSync({
      'duck/duck.dae': strToU8(await duckWithMaps()),
      'duck/duckCM.tga': await file(paths.duckTga),
      'duck/maps/holygrail.tga': await file(paths.grailTga),
      'duck/faerie2.bmp': await file(paths.faerieBmp),
    })

  it('COLLADA → glb and gltf: base colour TGA, normal TGA with alpha, emissive BMP, each a PNG of the same pixels', async () => {
    for (const target of ['glb', 'gltf']) {
      const result = await run('convert', await duckZip(), 'zip', { target_format: target })
      expect(result.details?.warnings, target).toBeUndefined()
      const doc = await readValid(result.bytes!, result.extension!)
      await expectSamePixels(material(doc).getBaseColorTexture(), await file(paths.duckTga))
      await expectSamePixels(material(doc).getNormalTexture(), await file(paths.grailTga))
      await expectSamePixels(material(doc).getEmissiveTexture(), await file(paths.faerieBmp))
      if (target === 'gltf')
        expect(Object.keys(unzipSync(result.bytes!)).sort()).toEqual([
          'duckCM.png',
          'faerie2.png',
          'holygrail.png',
          'model.bin',
          'model.gltf',
        ])
    }
  })

  it('COLLADA referencing ./../X/*.tga, zipped with its folders: three materials, three PNGs of the same pixels', async () => {
    const zip = zipSync({
      'Collada/kwxport_test_vcolors.dae': await file(paths.kwxport),
      'X/top.tga': await file(paths.top),
      'X/bottom.tga': await file(paths.bottom),
      'X/updown.tga': await file(paths.updown),
    })
    const doc = await readValid((await run('convert', zip, 'zip', { target_format: 'glb' })).bytes!, 'glb')
    const byName = new Map(
      doc
        .getRoot()
        .listMaterials()
        .map((m) => [m.getName(), m.getBaseColorTexture()]),
    )
    await expectSamePixels(byName.get('top'), await file(paths.top))
    await expectSamePixels(byName.get('bottom'), await file(paths.bottom))
    await expectSamePixels(byName.get('side'), await file(paths.updown))
  })

  it('the texture operations write the converted images as asked: png keeps every pixel, KTX2 validates', async () => {
    const png = await run('texture_optimize', await duckZip(), 'zip', { format: 'png' })
    const doc = await readValid(png.bytes!, 'zip')
    await expectSamePixels(material(doc).getBaseColorTexture(), await file(paths.duckTga))
    await expectSamePixels(material(doc).getEmissiveTexture(), await file(paths.faerieBmp))
    const ktx2 = await run('texture_ktx2', await duckZip(), 'zip', {})
    const basis = await readValid(ktx2.bytes!, 'zip')
    expect(
      basis
        .getRoot()
        .listTextures()
        .map((t) => t.getMimeType()),
    ).toEqual(['image/ktx2', 'image/ktx2', 'image/ktx2'])
    expect(
      [material(basis).getBaseColorTexture(), material(basis).getNormalTexture(), material(basis).getEmissiveTexture()].every(Boolean),
    ).toBe(true)
  })

  it('OBJ whose .mtl names a BMP, TGAs (one a normal map), a DDS and a file the zip lacks: the images as PNGs, the others named', async () => {
    const mtl = (await readFile(paths.spiderMtl, 'utf8'))
      .replace('map_Kd .\\SpiderTex.jpg', 'map_Kd .\\sydney.bmp\nnorm textures\\duckCM.tga')
      .replace('map_Kd .\\wal67ar_small.jpg', 'map_Kd -s 1 1 1 holygrail.tga')
      .replace('map_Kd .\\drkwood2.jpg', 'map_Kd .\\drkwood2.dds')
    const zip = zipSync({
      'spider/spider.obj': await file(paths.spiderObj),
      'spider/spider.mtl': strToU8(mtl),
      'spider/sydney.bmp': await file(paths.sydneyBmp),
      'spider/textures/duckCM.tga': await file(paths.duckTga),
      'spider/holygrail.tga': await file(paths.grailTga),
      'spider/drkwood2.dds': bc6hDds(),
      'spider/wal69ar_small.jpg': await file(paths.wal69),
    })
    const result = await run('convert', zip, 'zip', { target_format: 'glb' })
    expect(result.details?.warnings).toEqual([
      '[obj] texture ".\\drkwood2.dds" is a DDS image in BC6H (HDR), which Mos cannot convert to PNG, JPEG, WebP or KTX2; dropped',
      '[obj] texture ".\\engineflare1.jpg" is not in the upload; dropped',
    ])
    const doc = await readValid(result.bytes!, 'glb')
    const byName = new Map(
      doc
        .getRoot()
        .listMaterials()
        .map((m) => [m.getName(), m]),
    )
    await expectSamePixels(byName.get('HLeibTex')?.getBaseColorTexture(), await file(paths.sydneyBmp))
    await expectSamePixels(byName.get('HLeibTex')?.getNormalTexture(), await file(paths.duckTga))
    await expectSamePixels(byName.get('Skin')?.getBaseColorTexture(), await file(paths.grailTga))
    expect(byName.get('BeinTex')?.getBaseColorTexture()).toBeNull()
  })

  it('COLLADA whose texture is a DDS, or missing: the task names each file', async () => {
    const dae = (await duckWithMaps()).replace('<init_from>./duckCM.tga</init_from>', '<init_from>textures/duckCM.dds</init_from>')
    const result = await run('convert', zipSync({ 'duck.dae': strToU8(dae), 'textures/duckCM.dds': bc6hDds() }), 'zip', {
      target_format: 'glb',
    })
    expect(result.details?.warnings).toEqual([
      '[dae] texture "textures/duckCM.dds" is a DDS image in BC6H (HDR), which Mos cannot convert to PNG, JPEG, WebP or KTX2; dropped',
      '[dae] texture "maps/holygrail.tga" is not in the upload; dropped',
      '[dae] texture ".\\faerie2.bmp" is not in the upload; dropped',
    ])
    const doc = await readValid(result.bytes!, 'glb')
    expect(doc.getRoot().listTextures()).toEqual([])
  })

  it('a .dae uploaded alone: the warning names its TGA and says to send a zip', async () => {
    const result = await run('convert', await file(paths.duck), 'dae', { target_format: 'glb' })
    expect(result.details?.warnings).toEqual([
      '[dae] texture "./duckCM.tga" is not in the upload; dropped (a .dae uploaded alone brings no other file: upload a zip of it and its textures)',
    ])
    expect((await readValid(result.bytes!, 'glb')).getRoot().listTextures()).toEqual([])
  })

  it('OBJ whose .mtl names an animated GIF, a TIFF and an AVIF with alpha, and a damaged GIF: PNGs of the same pixels, the others named', async () => {
    const tiffPixels = pattern()
    const tiff = await sharp(tiffPixels.data, raw(tiffPixels)).tiff({ compression: 'deflate' }).toBuffer()
    const avif = await sharp(pattern(7).data, raw(pattern(7)))
      .avif({ lossless: true })
      .toBuffer()
    // Its major brand made mif1, as some encoders write it: AVIF only among the compatible brands.
    avif.write('mif1', 8, 'latin1')
    const gif = await twoFrameGif()
    const mtl = (await readFile(paths.spiderMtl, 'utf8'))
      .replace('map_Kd .\\wal67ar_small.jpg', 'map_Kd .\\wal67ar_small.tif')
      .replace('map_Kd .\\wal69ar_small.jpg', 'map_Kd textures/wal69ar_small.avif')
      .replace('map_Kd .\\SpiderTex.jpg', 'map_Kd .\\SpiderTex.gif')
      .replace('map_Kd .\\drkwood2.jpg', 'map_Kd .\\drkwood2.gif')
    const zip = zipSync({
      'spider/spider.obj': await file(paths.spiderObj),
      'spider/spider.mtl': strToU8(mtl),
      'spider/wal67ar_small.tif': new Uint8Array(tiff),
      'spider/textures/wal69ar_small.avif': new Uint8Array(avif),
      'spider/SpiderTex.gif': gif,
      // A GIF cut after its header: sharp cannot decode it.
      'spider/drkwood2.gif': gif.slice(0, 40),
    })
    for (const target of ['glb', 'gltf']) {
      const result = await run('convert', zip, 'zip', { target_format: target })
      // The reader's notes, then those of the pass after it that decodes the GIF, TIFF and AVIF textures.
      expect(result.details?.warnings, target).toEqual([
        '[obj] texture ".\\engineflare1.jpg" is not in the upload; dropped',
        '[obj] texture ".\\SpiderTex.gif" is an animated GIF of 2 frames: its first frame is kept, as a PNG',
        '[obj] texture ".\\drkwood2.gif" is a GIF image, which Mos could not decode (damaged, or over 8192×8192 pixels); dropped',
      ])
      const doc = await readValid(result.bytes!, result.extension!)
      const byName = baseColourTextures(doc)
      // TIFF is lossless: the very pixels made; the AVIF and the GIF (quantised) as sharp decodes them.
      expect(await pngPixels(byName.get('Skin'))).toEqual([...tiffPixels.data])
      expect(await pngPixels(byName.get('Brusttex'))).toEqual(await decodedPixels(avif))
      const first = await pngPixels(byName.get('HLeibTex'))
      expect(first).toEqual(await decodedPixels(gif))
      expect(first).not.toEqual([...(await sharp(gif, { page: 1 }).ensureAlpha().raw().toBuffer())])
      expect(byName.get('BeinTex')).toBeNull()
    }
  })

  it('COLLADA whose texture is a TIFF: its pixels as a PNG base colour', async () => {
    const pixels = pattern(50)
    // sharp's TIFF default is JPEG compression, which drops alpha: LZW keeps every pixel.
    const tiff = new Uint8Array(await sharp(pixels.data, raw(pixels)).tiff({ compression: 'lzw' }).toBuffer())
    const dae = (await readFile(paths.duck, 'utf8')).replace('<init_from>./duckCM.tga</init_from>', '<init_from>./duckCM.tiff</init_from>')
    const result = await run('convert', zipSync({ 'duck.dae': strToU8(dae), 'duckCM.tiff': tiff }), 'zip', { target_format: 'glb' })
    expect(result.details?.warnings).toBeUndefined()
    const doc = await readValid(result.bytes!, 'glb')
    expect(await pngPixels(material(doc).getBaseColorTexture())).toEqual([...pixels.data])
  })

  it('a zip whose model (COLLADA, OBJ) references a GIF, beside TIFF files it does not: only the GIF is decoded', async () => {
    const gif = new Uint8Array(
      await sharp(pattern(3).data, raw(pattern(3)))
        .gif()
        .toBuffer(),
    )
    // Files with a TIFF's magic and nothing sharp can decode after it: decoding one would be seen (a
    // decode asked for, a warning), as 300 real scans would cost time and memory.
    const scan = new Uint8Array(1 << 20).fill(7)
    scan.set([0x49, 0x49, 0x2a, 0])
    const scans = { 'scans/scan-001.tif': scan, 'scans/scan-002.tiff': scan.map((byte, i) => (i < 4 ? byte : 9)) }
    const dae = (await readFile(paths.duck, 'utf8')).replace('<init_from>./duckCM.tga</init_from>', '<init_from>./duckCM.gif</init_from>')
    const obj = 'mtllib quad.mtl\nv 0 0 0\nv 1 0 0\nv 1 1 0\nvt 0 0\nvt 1 0\nvt 1 1\nusemtl quad\nf 1/1 2/2 3/3\n'
    const zips = {
      dae: zipSync({ 'duck.dae': strToU8(dae), 'duckCM.gif': gif, ...scans }),
      obj: zipSync({ 'quad.obj': strToU8(obj), 'quad.mtl': strToU8('newmtl quad\nmap_Kd quad.gif\n'), 'quad.gif': gif, ...scans }),
    }
    for (const [model, zip] of Object.entries(zips)) {
      // sharp itself, counting the images it is given.
      let decodes = 0
      const counted = ((...input: Parameters<typeof sharp>) => {
        decodes++
        return sharp(...input)
      }) as typeof sharp
      const doc = await readModel(platform, zip, 'zip', { sharp: counted })
      expect(decodes, model).toBe(1)
      expect(await pngPixels(material(doc).getBaseColorTexture())).toEqual(await decodedPixels(gif))
      const result = await run('convert', zip, 'zip', { target_format: 'glb' })
      expect(result.details?.warnings, model).toBeUndefined()
      expect(await pngPixels(material(await readValid(result.bytes!, 'glb')).getBaseColorTexture())).toEqual(await decodedPixels(gif))
    }
  })

  it('FBX with an animated GIF, a TIFF and an AVIF embedded, and a damaged TIFF: PNGs of their pixels, the first frame and the damaged one named', async () => {
    const gif = await twoFrameGif()
    const tiff = new Uint8Array(
      await sharp(pattern(20).data, raw(pattern(20)))
        .tiff({ compression: 'lzw' })
        .toBuffer(),
    )
    const avif = new Uint8Array(
      await sharp(pattern(40).data, raw(pattern(40)))
        .avif({ lossless: true })
        .toBuffer(),
    )
    // Mos's own FBX writer embeds each texture's bytes as a Video's Content, as DCC tools do.
    const fbx = await writeFbx(
      quads([
        ['Anim', gif],
        ['Tiff', tiff],
        ['Avif', avif],
        ['Cut', tiff.slice(0, 60)],
      ]),
    )
    for (const target of ['glb', 'gltf']) {
      const result = await run('convert', fbx.bytes, 'fbx', { target_format: target })
      expect(result.details?.warnings, target).toEqual([
        '[fbx] texture "Anim.png" is an animated GIF of 2 frames: its first frame is kept, as a PNG',
        '[fbx] texture "Cut.png" is a TIFF image, which Mos could not decode (damaged, or over 8192×8192 pixels); dropped',
      ])
      const doc = await readValid(result.bytes!, result.extension!)
      const byName = baseColourTextures(doc)
      expect(await pngPixels(byName.get('Anim'))).toEqual(await decodedPixels(gif))
      expect(await pngPixels(byName.get('Tiff'))).toEqual([...pattern(20).data])
      expect(await pngPixels(byName.get('Avif'))).toEqual(await decodedPixels(avif))
      expect(byName.get('Cut')).toBeNull()
    }
  })

  it('FBX with a TGA embedded: a PNG base colour, valid', async () => {
    const doc = await readValid((await run('convert', await file(paths.fbxTga), 'fbx', { target_format: 'glb' })).bytes!, 'glb')
    const texture = material(doc).getBaseColorTexture()
    expect([texture?.getMimeType(), texture?.getSize()]).toEqual(['image/png', [256, 256]])
  })
})

/** A document of one textured quad per [name, image bytes], each material and texture under the name. */
function quads(textures: [string, Uint8Array][]): Document {
  const doc = new Document()
  const buffer = doc.createBuffer()
  const accessor = (type: 'VEC3' | 'VEC2' | 'SCALAR', array: Float32Array | Uint16Array) =>
    doc.createAccessor().setType(type).setArray(array).setBuffer(buffer)
  const scene = doc.createScene()
  textures.forEach(([name, bytes], index) => {
    const texture = doc.createTexture(name).setImage(bytes).setMimeType('image/png')
    const primitive = doc
      .createPrimitive()
      .setAttribute('POSITION', accessor('VEC3', new Float32Array([0, 0, index, 1, 0, index, 1, 1, index, 0, 1, index])))
      .setAttribute('NORMAL', accessor('VEC3', new Float32Array([0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1])))
      .setAttribute('TEXCOORD_0', accessor('VEC2', new Float32Array([0, 0, 1, 0, 1, 1, 0, 1])))
      .setIndices(accessor('SCALAR', new Uint16Array([0, 1, 2, 0, 2, 3])))
      .setMaterial(doc.createMaterial(name).setBaseColorTexture(texture))
    scene.addChild(doc.createNode(name).setMesh(doc.createMesh(name).addPrimitive(primitive)))
  })
  return doc
}
