import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { promisify } from 'node:util'
import { NodeIO } from '@gltf-transform/core'
import { createDefaultContainer, KHR_DF_MODEL_UASTC, write } from 'ktx-parse'
import { describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { createFixtures } from '../src/fixtures/index.ts'
import { inspectKtx2, sniffImage } from '../src/inspect/image.ts'
import { readGlbJson, uncompressedPrimitives } from '../src/inspect/glb-json.ts'
import {
  countObjResultTriangles,
  countObjTriangles,
  countPlyResultTriangles,
  countPlyTriangles,
  countStlTriangles,
  inspectGlb,
  inspectGltfZip,
} from '../src/inspect/model.ts'
import { familySamples, parseExposition } from '../src/inspect/prometheus.ts'
import { writeZip } from './support/operation-stubs.ts'
import { gltfpack } from '../../../test/support/gltfpack.ts'

const { available, paths } = corpusFiles({
  spiderAscii: assimp('STL', 'Spider_ascii.stl'),
  spiderBinary: assimp('STL', 'Spider_binary.stl'),
  cubeAscii: assimp('PLY', 'cube.ply'),
  cubeBinary: assimp('PLY', 'cube_binary.ply'),
  box: assimp('OBJ', 'box.obj'),
  cubeUsemtl: assimp('OBJ', 'cube_usemtl.obj'),
  cubeUsemtlMtl: assimp('OBJ', 'cube_usemtl.mtl'),
})

/** Triangle count as the assimp CLI reports it (faces after triangulation). */
async function assimpFaces(path: string): Promise<number> {
  const { stdout } = await promisify(execFile)('assimp', ['info', path])
  return Number(/Faces:\s+(\d+)/.exec(stdout)![1])
}

describe('the fixtures', () => {
  it('are deterministic and have the triangle counts the checks rely on', async () => {
    const [a, b] = [await createFixtures(), await createFixtures()]
    expect(Buffer.from(a.heavy.bytes).equals(Buffer.from(b.heavy.bytes))).toBe(true)
    expect((await inspectGlb(a.small.bytes)).triangles).toBe(a.small.triangles)
    expect((await inspectGlb(a.heavy.bytes)).triangles).toBe(125_000)
    const defects = await inspectGlb(a.defects.bytes)
    expect(defects).toMatchObject({ triangles: 20, vertices: 54, degenerate: 2 })
    expect(countObjTriangles(new TextDecoder().decode(a.smallObj.bytes))).toBe(32)
    expect(sniffImage(a.png.bytes)).toBe('png')
    await expect(inspectGlb(a.broken.bytes)).rejects.toThrow()
  })
})

describe.skipIf(!available)('output inspectors on real files', () => {
  it('count STL triangles, ASCII and binary, as assimp does', async () => {
    const expected = await assimpFaces(paths.spiderBinary)
    expect(countStlTriangles(new Uint8Array(await readFile(paths.spiderBinary)))).toBe(expected)
    expect(countStlTriangles(new Uint8Array(await readFile(paths.spiderAscii)))).toBe(expected)
  })

  it('count PLY triangles, ASCII quads and binary triangles, as assimp does', async () => {
    expect(countPlyTriangles(new Uint8Array(await readFile(paths.cubeAscii)))).toBe(await assimpFaces(paths.cubeAscii))
    expect(countPlyTriangles(new Uint8Array(await readFile(paths.cubeBinary)))).toBe(await assimpFaces(paths.cubeBinary))
  })

  it('count OBJ triangles as assimp does', async () => {
    expect(countObjTriangles(await readFile(paths.box, 'utf8'))).toBe(await assimpFaces(paths.box))
  })

  it('count the triangles of an OBJ result bundled with the .mtl it names, and refuse a bundle without it', async () => {
    const obj = new Uint8Array(await readFile(paths.cubeUsemtl))
    const mtl = new Uint8Array(await readFile(paths.cubeUsemtlMtl))
    expect(countObjResultTriangles(obj)).toBe(await assimpFaces(paths.cubeUsemtl))
    expect(countObjResultTriangles(writeZip({ 'cube_usemtl.obj': obj, 'cube_usemtl.mtl': mtl }))).toBe(await assimpFaces(paths.cubeUsemtl))
    expect(() => countObjResultTriangles(writeZip({ 'cube_usemtl.obj': obj }))).toThrow(
      'the bundle lacks cube_usemtl.mtl, which its .obj names in mtllib',
    )
  })
  it('count the triangles of a PLY result bundled with the images its TextureFile comments name, and refuse a bundle without them', async () => {
    const text = await readFile(paths.cubeAscii, 'latin1')
    const ply = new TextEncoder().encode(text.replace(/^(format .*\n)/m, '$1comment TextureFile logo file.png\n'))
    const faces = await assimpFaces(paths.cubeAscii)
    expect(countPlyResultTriangles(new Uint8Array(await readFile(paths.cubeBinary)))).toBe(faces)
    expect(countPlyResultTriangles(writeZip({ 'model.ply': ply, 'logo file.png': new Uint8Array([0x89, 0x50]) }))).toBe(faces)
    expect(() => countPlyResultTriangles(writeZip({ 'model.ply': ply }))).toThrow(
      'the bundle lacks logo file.png, which its .ply names in comment TextureFile',
    )
  })
})

describe('glTF bundles, GLB JSON, KTX2 and metrics', () => {
  it('open a .zip holding .gltf and .bin, deflated or stored, in a folder or not', async () => {
    const { small } = await createFixtures()
    const io = new NodeIO()
    const { json, resources } = await io.writeJSON(await io.readBinary(small.bytes), { basename: 'model' })
    const files = { 'model.gltf': new TextEncoder().encode(JSON.stringify(json)), ...resources }
    const inFolder = Object.fromEntries(Object.entries(files).map(([name, data]) => [`bundle/${name}`, data]))
    for (const zip of [writeZip(files, true), writeZip(files), writeZip(inFolder, true)]) {
      const facts = await inspectGltfZip(zip)
      expect(facts.triangles).toBe(32)
      expect(facts.entries.some((name) => name.endsWith('model.gltf'))).toBe(true)
    }
    await expect(inspectGltfZip(writeZip({ 'model.bin': resources['model.bin']! }))).rejects.toThrow(/no \.gltf/)
  })

  it('see an uncompressed primitive in raw GLB JSON', async () => {
    const { small } = await createFixtures()
    for (const extension of ['KHR_draco_mesh_compression', 'EXT_meshopt_compression', 'KHR_meshopt_compression']) {
      expect(uncompressedPrimitives(readGlbJson(small.bytes), extension), extension).toEqual({ total: 1, uncompressed: 1 })
    }
  })

  it('read a GLB stored with KHR_meshopt_compression (gltfpack -cz) to the facts of its EXT_meshopt_compression twin (-cc)', async () => {
    const { heavy } = await createFixtures()
    const [khr, ext] = [await gltfpack(heavy.bytes, 'glb', ['-cz']), await gltfpack(heavy.bytes, 'glb', ['-cc'])]
    expect(readGlbJson(khr).extensionsRequired).toContain('KHR_meshopt_compression')
    expect(uncompressedPrimitives(readGlbJson(khr), 'KHR_meshopt_compression')).toEqual({ total: 1, uncompressed: 0 })
    const facts = await inspectGlb(khr)
    expect(facts.triangles).toBe(heavy.triangles)
    expect(facts).toEqual(await inspectGlb(ext))
  })

  it('read a KTX2 container', () => {
    const container = createDefaultContainer()
    container.pixelWidth = 64
    container.pixelHeight = 32
    container.dataFormatDescriptor[0]!.colorModel = KHR_DF_MODEL_UASTC
    container.levels = [{ levelData: new Uint8Array(16), uncompressedByteLength: 16 }]
    const bytes = write(container)
    expect(sniffImage(bytes)).toBe('ktx2')
    expect(inspectKtx2(bytes)).toMatchObject({ width: 64, height: 32, mode: 'uastc' })
  })

  it('parse the Prometheus text format and refuse what is not', () => {
    const exposition = parseExposition(
      '# HELP a_total x\n# TYPE a_total counter\na_total{type="compress",status="completed"} 3\nh_bucket{le="+Inf"} 1\nh_sum 0.5\nh_count 1\n',
    )
    expect(familySamples(exposition, 'h')).toHaveLength(3)
    expect(exposition.samples[0]).toEqual({ name: 'a_total', labels: { type: 'compress', status: 'completed' }, value: 3 })
    expect(() => parseExposition('a_total three\n')).toThrow(/not a number/)
    expect(() => parseExposition('a_total 0x10\n')).toThrow(/not a number/)
    // What Prometheus (Go's ParseFloat) reads: prom-client writes NaN as "Nan".
    expect(parseExposition('a Nan\nb +Inf\nc -inf\nd 1.5e3\ne 7 1700000000000\n').samples.map((x) => x.value)).toEqual([
      NaN,
      Infinity,
      -Infinity,
      1500,
      7,
    ])
    expect(() => parseExposition('<html>\n')).toThrow(/not a sample/)
  })
})

describe('image headers', () => {
  it('give the size of PNG, JPEG and WebP (lossy and lossless) as sharp wrote them', async () => {
    const { default: sharp } = await import('sharp')
    const { png } = await createFixtures()
    const { imageSize } = await import('../src/inspect/image.ts')
    expect(imageSize(png.bytes)).toEqual({ width: 64, height: 64 })
    const source = sharp(png.bytes).resize(48, 20, { fit: 'fill' })
    for (const bytes of [
      await source.clone().jpeg().toBuffer(),
      await source.clone().webp().toBuffer(),
      await source.clone().webp({ lossless: true }).toBuffer(),
      await source.clone().png().toBuffer(),
    ]) {
      expect(imageSize(new Uint8Array(bytes))).toEqual({ width: 48, height: 20 })
    }
  })
})
