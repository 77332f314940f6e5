import { readdirSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { strToU8, zipSync } from 'fflate'
import { afterAll, describe, expect, it } from 'vitest'
import { ASSIMP_MODELS, assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { countSceneTriangles, createEnginePool, loadPlatform, readModel } from '../src/index.ts'
import { embeddedGltf } from '../../../test/support/gltf-fixtures.ts'

const { available, paths } = corpusFiles({
  spiderObj: assimp('OBJ', 'spider.obj'),
  spiderMtl: assimp('OBJ', 'spider.mtl'),
  spiderTex: assimp('OBJ', 'SpiderTex.jpg'),
  drkwood: assimp('OBJ', 'drkwood2.jpg'),
  engineflare: assimp('OBJ', 'engineflare1.jpg'),
  wal67: assimp('OBJ', 'wal67ar_small.jpg'),
  wal69: assimp('OBJ', 'wal69ar_small.jpg'),
  box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
  boxGltf: assimp('glTF2', 'BoxTextured-glTF', 'BoxTextured.gltf'),
  boxBin: assimp('glTF2', 'BoxTextured-glTF', 'BoxTextured0.bin'),
  boxPng: assimp('glTF2', 'BoxTextured-glTF', 'CesiumLogoFlat.png'),
  stlBinary: assimp('STL', 'Spider_binary.stl'),
  plyBinary: assimp('PLY', 'cube_binary.ply'),
  invalid: assimp('invalid', 'readme.txt'),
  techniqueWebgl: assimp('glTF2', 'BoxTextured-glTF-techniqueWebGL', 'BoxTextured.gltf'),
})

const bytesOf = async (path: string) => new Uint8Array(await readFile(path))

describe.skipIf(!available)('bad input fails cleanly through the pool', async () => {
  const pool = createEnginePool({ threads: 2 })
  const platform = await loadPlatform()
  afterAll(() => pool.destroy())
  const convert = (bytes: Uint8Array, format: string, options: Record<string, unknown> = {}) =>
    // The pool moves the bytes into the worker: send a copy so tests can reuse theirs.
    pool.run({ name: 'convert', input: { bytes: bytes.slice() }, format, options: { target_format: 'glb', ...options } })

  it('reads a zip of spider.obj with its .mtl and .jpg textures, materials textured', async () => {
    const files: Record<string, Uint8Array> = {
      'spider/spider.obj': await bytesOf(paths.spiderObj),
      'spider/spider.mtl': await bytesOf(paths.spiderMtl),
    }
    for (const key of ['spiderTex', 'drkwood', 'engineflare', 'wal67', 'wal69'] as const) {
      files[`spider/${paths[key].split('/').pop()}`] = await bytesOf(paths[key])
    }
    const result = await convert(zipSync(files), 'zip')
    if (!result.ok) throw new Error(result.message)
    const doc = await platform.io.readBinary(result.bytes!)
    expect(countSceneTriangles(doc)).toBe(1368)
    const textures = doc.getRoot().listTextures()
    expect(textures.length).toBeGreaterThanOrEqual(3)
    expect(textures.every((t) => t.getMimeType() === 'image/jpeg' && t.getImage()!.byteLength > 1000)).toBe(true)
    expect(
      doc
        .getRoot()
        .listMaterials()
        .filter((m) => m.getBaseColorTexture()).length,
    ).toBeGreaterThan(0)
  })

  it('reads a zip of a .gltf with its .bin and texture', async () => {
    const zip = zipSync({
      'BoxTextured.gltf': await bytesOf(paths.boxGltf),
      'BoxTextured0.bin': await bytesOf(paths.boxBin),
      'CesiumLogoFlat.png': await bytesOf(paths.boxPng),
    })
    const result = await convert(zip, 'zip')
    if (!result.ok) throw new Error(result.message)
    const doc = await platform.io.readBinary(result.bytes!)
    expect(countSceneTriangles(doc)).toBe(12)
    expect(doc.getRoot().listTextures()).toHaveLength(1)
  })

  it('refuses zip entries that escape the archive (zip-slip)', async () => {
    for (const name of ['../evil.obj', '/etc/evil.obj', 'a/../../evil.obj', 'C:/evil.obj', '..\\evil.obj']) {
      const zip = zipSync({ 'model.obj': strToU8('v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n'), [name]: strToU8('x') })
      const result = await convert(zip, 'zip')
      expect(result).toEqual({ ok: false, message: expect.stringMatching(/points outside the archive$/) })
    }
  })

  it('refuses a zip bomb by its declared size, and one that lies about it before inflating past the cap', async () => {
    const big = new Uint8Array(24 * 1024 * 1024) // compresses to ~24 KB
    const honest = zipSync({ 'model.obj': [big, { level: 1 }] })
    const declared = await convert(honest, 'zip', { maxAllocationBytes: 8 * 1024 * 1024 })
    expect(declared).toEqual({
      ok: false,
      message: expect.stringMatching(/declares 25165824 bytes, more than the 8388608 limit per file$/),
    })
    // Patch the central directory's uncompressed size to 10 bytes: only inflating can catch it.
    const lying = honest.slice()
    const view = new DataView(lying.buffer)
    let eocd = lying.byteLength - 22
    while (view.getUint32(eocd, true) !== 0x06054b50) eocd--
    view.setUint32(view.getUint32(eocd + 16, true) + 24, 10, true)
    const inflated = await convert(lying, 'zip', { maxAllocationBytes: 8 * 1024 * 1024 })
    expect(inflated).toEqual({ ok: false, message: expect.stringMatching(/inflates past the 8388608-byte limit \(zip bomb\?\)$/) })
  })

  it('turns truncated and garbage files of every format into failed results', async () => {
    const garbage = new Uint8Array(4096).map((_, i) => (i * 7919) % 251)
    const glb = await bytesOf(paths.box)
    const stl = await bytesOf(paths.stlBinary)
    const ply = await bytesOf(paths.plyBinary)
    const cases: [string, Uint8Array, RegExp][] = [
      ['glb', glb.subarray(0, glb.byteLength / 2), /^truncated GLB/],
      ['stl', stl.subarray(0, stl.byteLength - 7), /^truncated binary STL: header declares 1368 triangles/],
      ['stl', garbage.subarray(0, 40), /^not an STL file/],
      ['ply', ply.subarray(0, ply.byteLength - 5), /^truncated PLY/],
      ['ply', garbage, /^not a PLY file/],
      // A name every object answers to is no PLY type (it once passed an `in` check and read nonsense).
      [
        'ply',
        strToU8('ply\nformat binary_little_endian 1.0\nelement vertex 1\nproperty toString x\nend_header\n\0\0\0\0'),
        /^invalid PLY: unknown property type "toString"$/,
      ],
      ['obj', garbage, /^(invalid OBJ|OBJ file holds no faces)/],
      ['zip', garbage, /^not a zip file/],
      ['zip', zipSync({ 'readme.txt': strToU8('hello') }), /^zip holds no model file/],
      [
        'zip',
        zipSync({ 'a.obj': strToU8('v 0 0 0'), 'b.obj': strToU8('v 0 0 0') }),
        /^zip holds 2 \.obj models \(a\.obj, b\.obj\): upload one model per zip$/,
      ],
      ['gltf', garbage, /^invalid glTF JSON/],
      [
        'gltf',
        strToU8(JSON.stringify({ asset: { version: '2.0' }, buffers: [{ uri: 'toString', byteLength: 12 }] })),
        /^external resource not available: "toString" \(embed it/,
      ],
      ['glb', garbage, /^not a GLB file/],
      // The magic and then text: the version field holds ' not', which is the file's fault, not an unsupported version.
      ['glb', strToU8('glTF not really'), /^not a valid GLB: the header's version field holds 1953459744 \(a GLB says 2\)$/],
    ]
    for (const [format, bytes, message] of cases) {
      const result = await convert(bytes.slice(), format)
      expect(result.ok, `${format} ${message}`).toBe(false)
      expect(!result.ok && result.message, `${format}`).toMatch(message)
    }
  })

  it("fails every file of the corpus's invalid/ folder with a reason", async () => {
    const dir = join(ASSIMP_MODELS, 'invalid')
    for (const file of readdirSync(dir).filter((f) => f !== 'readme.txt')) {
      const format = file.split('.').pop()!.toLowerCase()
      const result = await pool.run({ name: 'convert', input: { path: join(dir, file) }, format, options: { target_format: 'glb' } })
      expect(result.ok, file).toBe(false)
      expect(!result.ok && result.message.length, file).toBeGreaterThan(5)
    }
  })

  it('refuses a valid file that requires an extension Mos cannot read as what it is, not as invalid glTF', async () => {
    const result = await convert(embeddedGltf(paths.techniqueWebgl), 'gltf')
    expect(result).toMatchObject({
      ok: false,
      message: 'unsupported glTF extension: the file requires KHR_technique_webgl, which Mos cannot read',
    })
  })

  it('fails fast on a PLY header declaring billions of vertices, without allocating', async () => {
    const header = (count: number) =>
      strToU8(
        `ply\nformat binary_little_endian 1.0\nelement vertex ${count}\nproperty float x\nproperty float y\nproperty float z\nend_header\n`,
      )
    const huge = await convert(header(4_000_000_000), 'ply')
    expect(huge).toEqual({
      ok: false,
      message: expect.stringMatching(/^PLY header declaring 4000000000 vertex would need 178\.8 GiB, more than the 1\.0 GiB limit$/),
    })
    const short = await convert(header(1_000_000), 'ply')
    expect(short).toEqual({ ok: false, message: 'truncated PLY: header declares 1000000 vertex (at least 12000000 bytes), body has 0' })
    // A face list declaring a billion corners in a small file fails before the list is allocated.
    const listHeader = strToU8(
      'ply\nformat binary_little_endian 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\nelement face 1\nproperty list int int vertex_indices\nend_header\n',
    )
    const list = new Uint8Array(listHeader.byteLength + 36 + 4 + 12)
    list.set(listHeader)
    new DataView(list.buffer).setInt32(listHeader.byteLength + 36, 1_000_000_000, true)
    expect(await convert(list, 'ply')).toEqual({
      ok: false,
      message: 'truncated PLY: a face list declares 1000000000 values, more than the rest of the file holds',
    })
    const ascii = strToU8(
      'ply\nformat ascii 1.0\nelement vertex 5000000\nproperty float x\nproperty float y\nproperty float z\nend_header\n1 2 3\n',
    )
    expect(await convert(ascii, 'ply')).toEqual({ ok: false, message: expect.stringMatching(/^truncated PLY/) })
  })

  it('fails fast on a binary STL declaring more triangles than its bytes hold', async () => {
    const stl = new Uint8Array(84 + 50)
    new DataView(stl.buffer).setUint32(80, 2_000_000_000, true)
    expect(await convert(stl, 'stl')).toEqual({
      ok: false,
      message: expect.stringMatching(/^binary STL declaring 2000000000 triangles would need .* GiB, more than the 1\.0 GiB limit$/),
    })
    new DataView(stl.buffer).setUint32(80, 1000, true)
    expect(await convert(stl, 'stl')).toEqual({
      ok: false,
      message: 'truncated binary STL: header declares 1000 triangles (50084 bytes), file has 134 bytes',
    })
  })

  it('refuses glTF accessors declaring more than the allocation bound', async () => {
    const json = {
      asset: { version: '2.0' },
      buffers: [{ byteLength: 12 }],
      bufferViews: [{ buffer: 0, byteLength: 12 }],
      accessors: [{ bufferView: 0, componentType: 5126, count: 500_000_000, type: 'VEC3' }],
    }
    const result = await convert(strToU8(JSON.stringify(json)), 'gltf')
    expect(result).toEqual({ ok: false, message: 'glTF accessors (1) would need 5.6 GiB, more than the 1.0 GiB limit' })
    const small = await convert(strToU8(JSON.stringify({ ...json, accessors: [{ ...json.accessors[0], count: 1000 }] })), 'gltf', {
      maxAllocationBytes: 1000,
    })
    expect(small).toEqual({ ok: false, message: 'glTF accessors (1) would need 12000 bytes, more than the 1000 bytes limit' })
  })

  it('reads the same documents directly as through the pool (readers are pure)', async () => {
    const doc = await readModel(platform, await bytesOf(paths.stlBinary), 'stl', { maxAllocationBytes: 10_000_000 })
    expect(countSceneTriangles(doc)).toBe(1368)
    await expect(readModel(platform, await bytesOf(paths.stlBinary), 'stl', { maxAllocationBytes: 1000 })).rejects.toThrow(/limit$/)
  })
})
