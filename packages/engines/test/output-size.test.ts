// The output-size rule (operations/output-size.ts, docs/api.md "Output size") on real files, through the pool
// as the server runs it: re-encoding never grows a texture or a model; larger results are said.
import { readFile } from 'node:fs/promises'
import { zipSync } from 'fflate'
import sharp from 'sharp'
import { afterAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import { createEnginePool, loadPlatform, type TextureReport } from '../src/index.ts'
import { success } from './support/job-result.ts'
import { validateGlb } from './texture-fixtures.ts'

const { available, paths } = corpusFiles({
  // Khronos's clear-coat test: PNG textures and PlasticWrap_normals.jpg, a real JPEG normal map (as DamagedHelmet's).
  clearCoat: assimp('glTF2', 'ClearCoat-glTF', 'ClearCoatTest.gltf'),
  box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
  engine: assimp('glTF2', '2CylinderEngine-glTF-Binary', '2CylinderEngine.glb'),
  spiderTex: assimp('OBJ', 'SpiderTex.jpg'),
  // Progressive already: no lossless re-coding of it is smaller.
  progressiveJpeg: assimp('MS3D', 'jeep1.jpg'),
  pirate: shared('glb', 'pirate-meshopt.glb'),
  manyCubes: shared('gltf', 'many-cubes.gltf'),
  manyCubesBin: shared('gltf', 'many-cubes.bin'),
})

const pool = createEnginePool({ threads: 2 })

/** texture_optimize on a standalone JPEG file, successful. */
const optimizeJpegFile = async (path: string, options: Record<string, unknown>) =>
  success(await pool.run({ name: 'texture_optimize', input: { path }, format: 'jpg', options }))
afterAll(() => pool.destroy())

/** The clear-coat model as one GLB (its .gltf points at files beside it, which uploads cannot). */
async function clearCoatGlb(): Promise<Uint8Array> {
  const platform = await loadPlatform()
  return platform.io.writeBinary(await platform.io.read(paths.clearCoat))
}

interface TextureDetails {
  textures: TextureReport[]
  size_rule?: { kept_input: boolean; input_bytes: number; result_bytes: number; note: string }
}

/**
 * A size as the notes say it, spelled out here apart from byte-size.ts: KB (1024 bytes, one decimal) or MB (two) as
 * the console shows sizes, and the exact count, grouped, where the notes gave only `376020 bytes`.
 */
const inWords = (bytes: number) => {
  expect(bytes).toBeGreaterThanOrEqual(1024)
  const rounded = bytes < 1024 ** 2 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 ** 2).toFixed(2)} MB`
  return `${rounded} (${String(bytes).replace(/\B(?=(\d{3})+$)/g, ',')} bytes)`
}

/** A job's details, read as the texture operations and the size rule write them. */
const detailsOf = (result: { details?: Record<string, unknown> }) => (result.details ?? {}) as unknown as TextureDetails

describe.skipIf(!available)('texture_optimize never grows a texture or a model (issue 20, item 8)', () => {
  it.each(['jpeg', 'webp'] as const)(
    'ClearCoatTest → %s: every texture no larger, the JPEG normal map stays lossy, valid glTF',
    async (format) => {
      const input = await clearCoatGlb()
      const result = success(
        await pool.run({ name: 'texture_optimize', input: { bytes: input.slice() }, format: 'glb', options: { format } }),
      )
      expect(result.extension).toBe('glb')
      expect(result.size).toBeLessThanOrEqual(input.byteLength)
      const details = detailsOf(result)
      const byName = new Map(details.textures.map((t) => [t.name.replace(/^texture \d+ "(.*)"$/, '$1'), t]))
      for (const texture of details.textures) {
        expect(texture.after, texture.name).toBeLessThanOrEqual(texture.before)
        // A texture that changed format got smaller; one that would not have kept its bytes and type, and says so.
        if (texture.to !== texture.from) expect(texture.after).toBeLessThan(texture.before)
        if (texture.after === texture.before) expect(texture.note).toMatch(/original kept: .* would be \d+ bytes, not smaller than its \d+/)
      }
      // The JPEG normal map was 144 210 bytes; lossless it became a 502 405-byte PNG before this rule.
      const normals = byName.get('PlasticWrap_normals')!
      expect(normals.slots).toContain('normalTexture')
      expect(normals.to).toMatch(format === 'jpeg' ? /^image\/jpeg$/ : /^image\/(jpeg|webp)$/)
      expect(normals.note).toMatch(/lossy normal map kept lossy/)
      // A lossless normal map stays lossless: PNG, or lossless WebP.
      const ribs = byName.get('RibsNormal')!
      expect(ribs.note).toMatch(/normal map kept lossless/)
      const output = await (await loadPlatform()).io.readBinary(result.bytes!)
      const ribsImage = output
        .getRoot()
        .listTextures()
        .find((t) => t.getName() === 'RibsNormal' || t.getURI().startsWith('RibsNormal'))!
      const ribsFormat = (await sharp(ribsImage.getImage()!).metadata()).format
      expect(['png', 'webp']).toContain(ribsFormat)
      if (ribsFormat === 'webp') expect(String.fromCharCode(...ribsImage.getImage()!.subarray(12, 16))).toBe('VP8L')
      // The input has one validator error of its own (a clear-coat normal map on a primitive without tangents),
      // which every glTF write repairs (MikkTSpace tangents, io/gltf-validity.ts).
      expect((await validateGlb(input)).errors.join()).toMatch(/MESH_PRIMITIVE_NO_TANGENT_SPACE/)
      expect((await validateGlb(result.bytes!)).errors).toEqual([])
    },
    // Four 2K textures re-encoded twice (the result and the comparison); slow on a busy 2-core machine.
    180_000,
  )

  it('a model whose rewrite would be larger comes back as its own bytes, said in size_rule', async () => {
    // pirate-meshopt.glb (24 696 bytes): its texture keeps its bytes, but the rewritten GLB is larger than the meshopt-packed original.
    const input = new Uint8Array(await readFile(paths.pirate))
    const result = success(
      await pool.run({ name: 'texture_optimize', input: { path: paths.pirate }, format: 'glb', options: { format: 'jpeg' } }),
    )
    expect(result.extension).toBe('glb')
    expect(result.bytes).toEqual(input)
    const { size_rule } = detailsOf(result)
    expect(size_rule).toMatchObject({ kept_input: true, input_bytes: input.byteLength })
    expect(size_rule!.result_bytes).toBeGreaterThan(input.byteLength)
    expect(size_rule!.note).toMatch(/: the input is returned unchanged$/)
  })

  it('a standalone JPEG asked as JPEG at quality 100 comes back as its own bytes, said in size_rule', async () => {
    const input = new Uint8Array(await readFile(paths.progressiveJpeg))
    const result = await optimizeJpegFile(paths.progressiveJpeg, { format: 'jpeg', quality: 100 })
    expect(result.bytes).toEqual(input)
    expect(result.extension).toBe('jpg')
    const { size_rule } = detailsOf(result)
    expect(size_rule).toMatchObject({ kept_input: true, input_bytes: input.byteLength })
    expect(size_rule!.result_bytes).toBeGreaterThan(input.byteLength)
    expect(size_rule!.note).toBe(
      `the result, ${inWords(size_rule!.result_bytes)}, is larger than the input, ${inWords(input.byteLength)}: the input is returned unchanged`,
    )
  })

  it('a standalone JPEG whose own coefficients code smaller than its re-encoding comes back re-coded losslessly: the same pixels, fewer bytes', async () => {
    const input = new Uint8Array(await readFile(paths.spiderTex))
    const result = await optimizeJpegFile(paths.spiderTex, { format: 'jpeg', quality: 100 })
    expect(result.extension).toBe('jpg')
    expect(result.size).toBeLessThan(input.byteLength)
    const [after, before] = await Promise.all([sharp(result.bytes!).raw().toBuffer(), sharp(input).raw().toBuffer()])
    expect(after.equals(before)).toBe(true)
    const details = detailsOf(result)
    expect(details.size_rule).toBeUndefined()
    expect(details.textures[0]).toMatchObject({
      progressive: true,
      after: result.size,
      note: `its JPEG coefficients re-coded losslessly as a progressive JPEG: ${input.byteLength} → ${result.size} bytes, the same pixels`,
    })
  })

  it('a standalone JPEG asked as PNG is the PNG asked for, larger, and says so', async () => {
    const input = new Uint8Array(await readFile(paths.spiderTex))
    const result = await optimizeJpegFile(paths.spiderTex, { format: 'png' })
    expect(result.extension).toBe('png')
    expect((await sharp(result.bytes!).metadata()).format).toBe('png')
    const { size_rule } = detailsOf(result)
    expect(size_rule).toMatchObject({ kept_input: false, input_bytes: input.byteLength, result_bytes: result.size })
    expect(size_rule!.note).toMatch(/: returned, since it is a \.png file, not the input's \.jpg$/)
  })
})

describe.skipIf(!available)('the other operations under the rule', () => {
  it('compress: a result larger than its input is returned and reported, never silently', async () => {
    // BoxTextured.glb is 4.6 KiB, most of it a PNG: meshopt's extension JSON outweighs what it saves on 24 vertices.
    const input = new Uint8Array(await readFile(paths.box))
    const result = success(await pool.run({ name: 'compress', input: { path: paths.box }, format: 'glb', options: { engine: 'meshopt' } }))
    const { size_rule } = detailsOf(result)
    // What this test is about: should meshopt's JSON ever cost less than it saves here, pick a smaller input.
    expect(result.size).toBeGreaterThan(input.byteLength)
    expect(result.bytes).not.toEqual(input)
    expect(size_rule).toMatchObject({ kept_input: false, input_bytes: input.byteLength, result_bytes: result.size })
    expect(size_rule!.note).toMatch(/the task’s notes say why it came out larger; where they do not, that is a defect of Mos to report/)
    // The notes say why, measured on the two files: the binary data shrank, the JSON grew more.
    const why = ((result.details?.notes ?? []) as string[]).find((note) => note.includes('by its JSON alone'))
    const [binBefore, binAfter, jsonBefore, jsonAfter] = (why?.match(/\d+/g) ?? []).map(Number)
    expect(binAfter).toBeLessThan(binBefore!)
    expect(jsonAfter! - jsonBefore!).toBeGreaterThan(binBefore! - binAfter!)
    expect(jsonBefore! + binBefore! + 28).toBe(input.byteLength) // the GLB header and two chunk headers
  })

  it('compress of a deflated zip: a result larger than the upload is measured against what its files hold', async () => {
    // many-cubes.gltf and its .bin, deflated as an upload would be: about 1.47 MB in an 85 KB zip.
    const gltf = new Uint8Array(await readFile(paths.manyCubes))
    const bin = new Uint8Array(await readFile(paths.manyCubesBin))
    const zip = zipSync({ 'many-cubes.gltf': gltf, 'many-cubes.bin': bin })
    const unpacked = gltf.byteLength + bin.byteLength
    const result = success(await pool.run({ name: 'compress', input: { bytes: zip.slice() }, format: 'zip', options: { engine: 'draco' } }))
    // What this test is about: should Draco ever write this model smaller than its zip, deflate it harder.
    expect(result.size).toBeGreaterThan(zip.byteLength)
    expect(result.size).toBeLessThan(unpacked)
    const sizeRule = detailsOf(result).size_rule as { input_unpacked_bytes?: number; note: string }
    expect(sizeRule).toMatchObject({
      kept_input: false,
      input_bytes: zip.byteLength,
      result_bytes: result.size,
      input_unpacked_bytes: unpacked,
    })
    expect(sizeRule.note).toBe(
      `the result, ${inWords(result.size)}, is larger than the upload, ${inWords(zip.byteLength)}, a deflated zip whose files hold ${inWords(unpacked)}: the result is ${((result.size / unpacked) * 100).toFixed(1)} % of them`,
    )
    expect(sizeRule.note).not.toMatch(/defect/)
  })

  it('convert may grow (a text format was asked for): the larger OBJ, no size_rule', async () => {
    const input = new Uint8Array(await readFile(paths.engine))
    const result = success(
      await pool.run({ name: 'convert', input: { path: paths.engine }, format: 'glb', options: { target_format: 'obj' } }),
    )
    // Its materials have colours, so the OBJ comes with its .mtl in a zip (docs/formats.md).
    expect(result.extension).toBe('zip')
    expect(result.size).toBeGreaterThan(input.byteLength)
    expect(detailsOf(result)).not.toHaveProperty('size_rule')
  })
})
