import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { unzipSync } from 'fflate'
import { afterAll, describe, expect, it } from 'vitest'
import { assimpInfo, hasAssimpCli } from '../../../test/support/assimp-info.ts'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import type { Document } from '@gltf-transform/core'
import sharp from 'sharp'
import { countSceneTriangles, createEnginePool, loadPlatform, readModel, type TextureReport } from '../src/index.ts'
import { glbOf } from './support/compress-file.ts'
import { texturedGlb, withPngChunk } from './texture-fixtures.ts'
import { success } from './support/job-result.ts'

const { available, paths } = corpusFiles({
  box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
  engine: assimp('glTF2', '2CylinderEngine-glTF-Binary', '2CylinderEngine.glb'),
  shapes: shared('glb', 'ShapeCollection.glb'),
  testmixed: assimp('OBJ', 'testmixed.obj'),
  wusonPly: assimp('PLY', 'Wuson.ply'),
  clearCoat: assimp('glTF2', 'ClearCoat-glTF', 'ClearCoatTest.gltf'),
})

/** Khronos glTF-Validator (dart2js build, untyped). */
const validator = createRequire(import.meta.url)('gltf-validator') as {
  validateBytes(
    data: Uint8Array,
    options?: { uri?: string; maxIssues?: number; externalResourceFunction?: (uri: string) => Promise<Uint8Array> },
  ): Promise<{ issues: { numErrors: number } }>
}

const cli = hasAssimpCli()
if (!cli) {
  if (process.env.REQUIRE_CORPUS === '1') throw new Error('the assimp command is missing (apt-get install assimp-utils)')
  console.warn('[skip] assimp CLI missing: outputs are not reopened with assimp info')
}

/** Triangles assimp reads from written bytes (a zip is unpacked and its model.gltf or model.obj opened). */
async function assimpTriangles(bytes: Uint8Array, extension: string): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'mos-convert-'))
  try {
    let file = join(dir, `model.${extension}`)
    if (extension === 'zip') {
      const entries = unzipSync(bytes)
      for (const [name, content] of Object.entries(entries)) await writeFile(join(dir, name), content)
      file = join(dir, ['model.gltf', 'model.obj', 'model.ply'].find((name) => name in entries)!)
    } else await writeFile(file, bytes)
    return (await assimpInfo(file, { raw: true })).triangles
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** The images a model holds, in its texture order. */
function imagesOf(doc: Document): Uint8Array[] {
  return doc
    .getRoot()
    .listTextures()
    .map((texture) => texture.getImage()!)
}

/** The images in a zip (an OBJ with its materials and textures), in name order. */
function zippedImages(zip: Uint8Array): Uint8Array[] {
  return Object.entries(unzipSync(zip))
    .filter(([name]) => /\.(png|jpe?g)$/i.test(name))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, bytes]) => bytes)
}

/** Each image's decoded RGBA as text: equal keys, the same pixels. */
async function pixelKeys(images: Uint8Array[]): Promise<string[]> {
  return Promise.all(images.map(async (bytes) => (await sharp(bytes).ensureAlpha().raw().toBuffer()).toString('base64')))
}

describe.skipIf(!available)('convert job', async () => {
  const pool = createEnginePool({ threads: 2 })
  const platform = await loadPlatform()
  afterAll(() => pool.destroy())
  const convert = async (bytes: Uint8Array, target_format: string) =>
    success(await pool.run({ name: 'convert', input: { bytes: bytes.slice() }, format: 'glb', options: { target_format } }))

  const sources = { box: paths.box, engine: paths.engine, shapes: paths.shapes }
  /**
   * OBJ output is a zip of .obj, .mtl and images when materials hold colours or textures (box and
   * engine do); PLY output a zip of .ply and images when parts draw with a base colour map (box).
   */
  const bundled: Record<string, string[]> = { box: ['obj', 'ply'], engine: ['obj'], shapes: [] }
  for (const [name, path] of Object.entries(sources)) {
    for (const target of ['obj', 'stl', 'ply', 'gltf'] as const) {
      it(`${name}.glb → ${target} keeps every triangle (our reader and assimp)`, async () => {
        const input = await readModel(platform, new Uint8Array(await readFile(path)), 'glb')
        const expected = countSceneTriangles(input)
        const result = await pool.run({ name: 'convert', input: { path }, format: 'glb', options: { target_format: target } })
        if (!result.ok) throw new Error(result.message)
        expect(result.extension).toBe(target === 'gltf' || bundled[name]!.includes(target) ? 'zip' : target)
        const back = await readModel(platform, result.bytes!, result.extension)
        expect(countSceneTriangles(back)).toBe(expected)
        if (cli) expect(await assimpTriangles(result.bytes!, result.extension)).toBe(expected)
      })
    }
  }

  it('gltf output is a zip of model.gltf, model.bin and the textures, valid for glTF-Validator', async () => {
    const result = await pool.run({ name: 'convert', input: { path: paths.box }, format: 'glb', options: { target_format: 'gltf' } })
    if (!result.ok) throw new Error(result.message)
    const files = unzipSync(result.bytes!)
    const report = await validator.validateBytes(files['model.gltf']!, {
      uri: 'model.gltf',
      maxIssues: 0,
      externalResourceFunction: async (uri) => files[decodeURIComponent(uri)]!,
    })
    expect(report.issues.numErrors).toBe(0)
    const names = Object.keys(files).sort()
    expect(names).toEqual(['baseColor.png', 'model.bin', 'model.gltf'])
    const back = await readModel(platform, result.bytes!, 'zip')
    expect(back.getRoot().listTextures()[0]!.getImage()!.byteLength).toBeGreaterThan(0)
  })

  it('carries the textures in the smallest coding of their pixels, reported: ClearCoatTest to GLB and to OBJ', async () => {
    const glb = await glbOf(platform, paths.clearCoat)
    const before = imagesOf(await platform.io.readBinary(glb))
    const inputOf = new Map((await pixelKeys(before)).map((key, i) => [key, before[i]!]))
    for (const target of ['glb', 'obj']) {
      const result = await convert(glb, target)
      // OBJ's materials hold fewer of its textures (no clearcoat): the images it carries are checked.
      const after = target === 'glb' ? imagesOf(await platform.io.readBinary(result.bytes!)) : zippedImages(result.bytes!)
      expect(after.length, target).toBeGreaterThan(0)
      // Its normal map (T.81's example Huffman tables) and its PNGs (pHYs and tIME only): each re-coded smaller,
      // decoding to an input texture's very pixels.
      let saved = 0
      for (const [i, key] of (await pixelKeys(after)).entries()) {
        expect(inputOf.has(key), `${target} image ${i}`).toBe(true)
        expect(after[i]!.byteLength, `${target} image ${i}`).toBeLessThan(inputOf.get(key)!.byteLength)
        saved += inputOf.get(key)!.byteLength - after[i]!.byteLength
      }
      // The report names the images the output carries, and nothing the target left out (OBJ holds no clearcoat map).
      if (target === 'obj') expect(after.length).toBeLessThan(before.length)
      const report = result.details!.textures_repacked as TextureReport[]
      expect(report, target).toHaveLength(after.length)
      expect(
        report.reduce((sum, entry) => sum + entry.before - entry.after, 0),
        target,
      ).toBe(saved)
    }
  })

  it('leaves a PNG with a colour-space or text chunk as it came where the target is not glTF, whose readers ignore them', async () => {
    const plain = new Uint8Array(await readFile(join(dirname(paths.clearCoat), 'RoughnessStripes.png')))
    const gamma = withPngChunk(plain, 'gAMA', Buffer.from([0, 0, 0xb1, 0x8f]))
    const text = withPngChunk(plain, 'tEXt', Buffer.from('Copyright\0Example', 'latin1'))
    for (const png of [gamma, text]) {
      const glb = await texturedGlb(platform, [{ baseColor: png }])
      const [toObj] = zippedImages((await convert(glb, 'obj')).bytes!)
      expect(Buffer.from(toObj!).equals(Buffer.from(png))).toBe(true)
      const [toGlb] = imagesOf(await platform.io.readBinary((await convert(glb, 'glb')).bytes!))
      expect(toGlb!.byteLength).toBeLessThan(png.byteLength)
      expect(await pixelKeys([toGlb!])).toEqual(await pixelKeys([png]))
    }
    const [plainToObj] = zippedImages((await convert(await texturedGlb(platform, [{ baseColor: plain }]), 'obj')).bytes!)
    expect(plainToObj!.byteLength).toBeLessThan(plain.byteLength)
  })

  it('keeps points and lines in OBJ, drops them from STL with a note', async () => {
    const obj = await pool.run({ name: 'convert', input: { path: paths.testmixed }, format: 'obj', options: { target_format: 'obj' } })
    if (!obj.ok) throw new Error(obj.message)
    const text = new TextDecoder().decode(obj.bytes)
    expect(text.match(/^p /gm)).toHaveLength(24)
    expect(text.match(/^l /gm)).toHaveLength(18)
    expect(text.match(/^f /gm)).toHaveLength(12)
    const stl = await pool.run({ name: 'convert', input: { path: paths.testmixed }, format: 'obj', options: { target_format: 'stl' } })
    if (!stl.ok) throw new Error(stl.message)
    expect(stl.details?.notes).toEqual([
      'STL cannot hold points: 24 points dropped',
      'STL cannot hold lines: 18 line segments dropped',
      'STL cannot hold materials: 1 material(s) dropped',
    ])
    const ply = await pool.run({ name: 'convert', input: { path: paths.testmixed }, format: 'obj', options: { target_format: 'ply' } })
    if (!ply.ok) throw new Error(ply.message)
    expect(ply.details?.notes).toEqual([
      'PLY cannot hold points beside faces: 24 points dropped',
      'PLY cannot hold lines: 18 line segments dropped',
      'PLY cannot hold materials: 1 material(s) dropped',
    ])
  })

  it('a textured glb → ply zip: model.ply naming the base colour image, which comes beside it with the same pixels', async () => {
    const result = await pool.run({ name: 'convert', input: { path: paths.box }, format: 'glb', options: { target_format: 'ply' } })
    if (!result.ok) throw new Error(result.message)
    expect(result.extension).toBe('zip')
    const entries = unzipSync(result.bytes!)
    const images = Object.keys(entries).filter((name) => name !== 'model.ply')
    expect(images).toHaveLength(1)
    expect(new TextDecoder('latin1').decode(entries['model.ply']!)).toContain(`comment TextureFile ${images[0]}\n`)
    const input = await platform.io.readBinary(new Uint8Array(await readFile(paths.box)))
    expect(await pixelKeys(zippedImages(result.bytes!))).toEqual(await pixelKeys(imagesOf(input)))
    expect(result.details?.notes).toEqual(['PLY cannot hold materials: 1 material(s) dropped, their base colour maps kept'])
    const back = await readModel(platform, result.bytes!, 'zip')
    const prim = back.getRoot().listMeshes()[0]!.listPrimitives()[0]!
    expect(await pixelKeys([prim.getMaterial()!.getBaseColorTexture()!.getImage()!])).toEqual(await pixelKeys(imagesOf(input)))
  })

  it('a textured part beside one without UVs → ply: the UVs and the map both dropped, each named, a bare .ply', async () => {
    const doc = await platform.io.readBinary(new Uint8Array(await readFile(paths.box)))
    const root = doc.getRoot()
    const [prim] = root.listMeshes()[0]!.listPrimitives()
    const bare = doc.createPrimitive().setIndices(prim!.getIndices()).setAttribute('POSITION', prim!.getAttribute('POSITION'))
    root.listScenes()[0]!.addChild(doc.createNode('bare').setTranslation([2, 0, 0]).setMesh(doc.createMesh('bare').addPrimitive(bare)))
    const result = await convert(await platform.io.writeBinary(doc), 'ply')
    expect(result.extension).toBe('ply')
    expect(new TextDecoder('latin1').decode(result.bytes!.subarray(0, 400))).not.toContain('TextureFile')
    expect(result.details?.notes).toEqual([
      'PLY holds normals only where every part has them: normals of 1 part(s) dropped',
      'PLY holds UVs only where every part has them: 1 UV set(s) of 1 part(s) dropped',
      'PLY cannot hold materials: 1 material(s) dropped',
      'PLY holds maps only with the UVs of every part: 1 texture(s) dropped with the UVs',
    ])
  })

  it('a base colour map on TEXCOORD_1 → obj and ply: the UVs written are set 1, and an emissive map on set 0 is named', async () => {
    const doc = await platform.io.readBinary(new Uint8Array(await readFile(paths.box)))
    const prim = doc.getRoot().listMeshes()[0]!.listPrimitives()[0]!
    const set0 = prim.getAttribute('TEXCOORD_0')!
    // A second set unlike the first: mirrored in u, squeezed into the middle half in v.
    const set1 = Float32Array.from(set0.getArray()!, (value: number, i) => (i % 2 === 0 ? 1 - value : 0.25 + value * 0.5))
    prim.setAttribute('TEXCOORD_1', doc.createAccessor().setType('VEC2').setArray(set1).setBuffer(set0.getBuffer()))
    const material = prim.getMaterial()!
    material.getBaseColorTextureInfo()!.setTexCoord(1)
    const uvPairs = (uvs: ArrayLike<number>) =>
      Array.from({ length: uvs.length / 2 }, (_, v) => `${uvs[v * 2]!.toFixed(4)} ${uvs[v * 2 + 1]!.toFixed(4)}`).sort()
    expect(uvPairs(set1)).not.toEqual(uvPairs(set0.getArray()!))
    for (const target of ['obj', 'ply']) {
      const result = await convert(await platform.io.writeBinary(doc), target)
      const back = await readModel(platform, result.bytes!, result.extension)
      const written = back.getRoot().listMeshes()[0]!.listPrimitives()[0]!.getAttribute('TEXCOORD_0')!
      expect([...new Set(uvPairs(written.getArray()!))], target).toEqual([...new Set(uvPairs(set1))])
      expect(JSON.stringify(result.details?.notes), target).not.toContain('reading another set')
    }
    // Maps of one material on two sets: the base colour's set is written, and the map that cannot have its own named.
    material.setEmissiveTexture(material.getBaseColorTexture()).setEmissiveFactor([1, 1, 1])
    const mixed = await convert(await platform.io.writeBinary(doc), 'obj')
    expect(mixed.details?.notes).toContain(
      'OBJ holds one UV set per part, the one the base colour map reads: 1 map(s) reading another set are drawn with it (the emissive map of material "Texture" reads UV set 0, set 1 written)',
    )
  })

  it('PLY → glb → PLY round trip keeps triangles, normals and UVs', async () => {
    const glb = await pool.run({ name: 'convert', input: { path: paths.wusonPly }, format: 'ply', options: { target_format: 'glb' } })
    if (!glb.ok) throw new Error(glb.message)
    const ply = await pool.run({ name: 'convert', input: { bytes: glb.bytes! }, format: 'glb', options: { target_format: 'ply' } })
    if (!ply.ok) throw new Error(ply.message)
    const back = await readModel(platform, ply.bytes!, 'ply')
    expect(countSceneTriangles(back)).toBe(3732)
    const prim = back.getRoot().listMeshes()[0]!.listPrimitives()[0]!
    expect(prim.getAttribute('NORMAL')).not.toBeNull()
    expect(prim.getAttribute('TEXCOORD_0')).not.toBeNull()
  })

  it('compress reads through the same format layer (PLY in, Draco glb out)', async () => {
    const result = await pool.run({ name: 'compress', input: { path: paths.wusonPly }, format: 'ply', options: { engine: 'draco' } })
    if (!result.ok) throw new Error(result.message)
    const out = await platform.io.readBinary(result.bytes!)
    expect(
      out
        .getRoot()
        .listExtensionsUsed()
        .map((e) => e.extensionName),
    ).toContain('KHR_draco_mesh_compression')
    expect(countSceneTriangles(out)).toBe(3732)
  })

  it('refuses an unknown or unwritable target with the writable list', async () => {
    const result = await pool.run({ name: 'convert', input: { path: paths.box }, format: 'glb', options: { target_format: 'usdz' } })
    expect(result.ok).toBe(false)
    expect(!result.ok && result.message).toMatch(/^unsupported target format: usdz \(writable: glb, gltf, .*obj.*\)$/)
    const missing = await pool.run({ name: 'convert', input: { path: paths.box }, format: 'glb', options: {} })
    expect(missing).toEqual({ ok: false, message: 'convert needs a target_format' })
  })
})
