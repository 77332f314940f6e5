import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { type Document, Logger } from '@gltf-transform/core'
import { describe, expect, it } from 'vitest'
import { assimpInfo, hasAssimpCli } from '../../../test/support/assimp-info.ts'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { countSceneTriangles, loadPlatform, readModel } from '../src/index.ts'
import { readPly, writePly } from '../src/io/ply.ts'
import { createUploadResolver } from '../src/io/upload-files.ts'
import { unzipSync } from 'fflate'

const { available, paths } = corpusFiles({
  wusonObj: assimp('OBJ', 'WusonOBJ.obj'),
  box: assimp('OBJ', 'box.obj'),
  concave: assimp('OBJ', 'concave_polygon.obj'),
  usemtl: assimp('OBJ', 'cube_usemtl.obj'),
  numberFormats: assimp('OBJ', 'number_formats.obj'),
  multipleSpaces: assimp('OBJ', 'multiple_spaces.obj'),
  testmixed: assimp('OBJ', 'testmixed.obj'),
  vertexColors: assimp('OBJ', 'cube_with_vertexcolors.obj'),
  utf16: assimp('OBJ', 'box_UTF16BE.obj'),
  maxStl: assimp('STL', '3DSMaxExport.STL'),
  wusonStl: assimp('STL', 'Wuson.stl'),
  spiderBinary: assimp('STL', 'Spider_binary.stl'),
  spiderAscii: assimp('STL', 'Spider_ascii.stl'),
  twoSolids: assimp('STL', 'triangle_with_two_solids.stl'),
  wusonPly: assimp('PLY', 'Wuson.ply'),
  cubePly: assimp('PLY', 'cube.ply'),
  cubeBinary: assimp('PLY', 'cube_binary.ply'),
  cubeUv: assimp('PLY', 'cube_uv.ply'),
  floatColor: assimp('PLY', 'float-color.ply'),
  points: assimp('PLY', 'points.ply'),
  issue623: assimp('PLY', 'issue623.ply'),
  logo: assimp('glTF2', 'BoxTextured-glTF', 'CesiumLogoFlat.png'),
  checker: assimp('glTF2', 'BoxTexcoords-glTF', 'texture.png'),
})

const cli = hasAssimpCli()

/** The triangles assimp reads from a PLY zip's model.ply, unpacked with its images. */
async function assimpPlyTriangles(entries: Record<string, Uint8Array>): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'mos-ply-zip-'))
  try {
    for (const [name, bytes] of Object.entries(entries)) await writeFile(join(dir, name), bytes)
    return (await assimpInfo(join(dir, 'model.ply'), { raw: true })).triangles
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
if (!cli) {
  if (process.env.REQUIRE_CORPUS === '1') throw new Error('the assimp command is missing (apt-get install assimp-utils)')
  console.warn('[skip] assimp CLI missing: triangle counts are not cross-checked against assimp info')
}

function primitiveCount(doc: Document, mode: number): number {
  let n = 0
  for (const mesh of doc.getRoot().listMeshes()) {
    for (const prim of mesh.listPrimitives()) {
      if (prim.getMode() !== mode) continue
      const count = prim.getIndices()?.getCount() ?? prim.getAttribute('POSITION')!.getCount()
      n += mode === 1 ? count / 2 : count
    }
  }
  return n
}

describe.skipIf(!available)('format readers on the assimp corpus', async () => {
  const platform = await loadPlatform()
  const read = async (path: string) => readModel(platform, new Uint8Array(await readFile(path)), path.split('.').pop()!.toLowerCase())

  // [file, triangles, lines, points]; cross-checked against assimp's own (post-processed) import.
  const cases: [keyof typeof paths, number, number, number][] = [
    ['wusonObj', 3732, 0, 0],
    ['box', 12, 0, 0],
    ['concave', 64, 0, 0],
    ['usemtl', 12, 0, 0],
    ['numberFormats', 1, 0, 0],
    ['multipleSpaces', 1, 0, 0],
    ['testmixed', 12, 18, 24],
    ['maxStl', 2000, 0, 0],
    ['wusonStl', 3732, 0, 0],
    ['twoSolids', 2, 0, 0],
    ['wusonPly', 3732, 0, 0],
    ['cubePly', 12, 0, 0],
    ['cubeBinary', 12, 0, 0],
    ['cubeUv', 12, 0, 0],
    ['floatColor', 1, 0, 0],
  ]
  for (const [name, triangles, lines, points] of cases) {
    it(`${name}: ${triangles} triangles, ${lines} lines, ${points} points`, async () => {
      const doc = await read(paths[name])
      expect(countSceneTriangles(doc)).toBe(triangles)
      expect(primitiveCount(doc, 1)).toBe(lines)
      expect(primitiveCount(doc, 0)).toBe(points)
      if (cli) {
        const counts = await assimpInfo(paths[name])
        expect([counts.triangles, counts.lines, counts.points]).toEqual([triangles, lines, points])
      }
    })
  }

  it('binary STL whose header starts like text, and its ASCII twin, hold the same 1368 triangles', async () => {
    const binary = await read(paths.spiderBinary)
    const ascii = await read(paths.spiderAscii)
    expect(countSceneTriangles(binary)).toBe(1368)
    expect(countSceneTriangles(ascii)).toBe(1368)
    // assimp's post-processing turns the file's degenerate triangles into lines and points; raw, it agrees.
    if (cli) expect((await assimpInfo(paths.spiderBinary, { raw: true })).triangles).toBe(1368)
  })

  it('reads a binary STL whose header starts with "solid" as binary', async () => {
    const bytes = new Uint8Array(await readFile(paths.spiderBinary))
    bytes.set(new TextEncoder().encode('solid spider exported by a CAD tool'), 0)
    expect(countSceneTriangles(await readModel(platform, bytes, 'stl'))).toBe(1368)
  })

  it('reads big-endian PLY with uchar colours, a quad face and a triangle strip', async () => {
    const header = new TextEncoder().encode(
      'ply\nformat binary_big_endian 1.0\nelement vertex 5\nproperty float x\nproperty float y\nproperty float z\n' +
        'property uchar red\nproperty uchar green\nproperty uchar blue\nelement face 1\nproperty list uchar int vertex_indices\n' +
        'element tristrips 1\nproperty list int int vertex_indices\nend_header\n',
    )
    const body = new DataView(new ArrayBuffer(5 * 15 + 1 + 16 + 4 + 24))
    const corners = [
      [0, 0, 0],
      [1, 0, 0],
      [1, 1, 0],
      [0, 1, 0],
      [2, 0, 0],
    ]
    let at = 0
    corners.forEach((c, i) => {
      for (const v of c) body.setFloat32((at += 4) - 4, v, false)
      for (const v of [255, i * 50, 0]) body.setUint8(at++, v)
    })
    body.setUint8(at++, 4)
    for (const v of [0, 1, 2, 3]) body.setInt32((at += 4) - 4, v, false)
    body.setInt32((at += 4) - 4, 6, false)
    for (const v of [1, 4, 2, -1, 3, 0]) body.setInt32((at += 4) - 4, v, false)
    const bytes = new Uint8Array(header.byteLength + body.byteLength)
    bytes.set(header)
    bytes.set(new Uint8Array(body.buffer), header.byteLength)
    const doc = await readModel(platform, bytes, 'ply')
    // quad → 2 triangles; strip 1 4 2 → 1 triangle (the -1 restart leaves 3 0, too short)
    expect(countSceneTriangles(doc)).toBe(3)
    const prim = doc.getRoot().listMeshes()[0]!.listPrimitives()[0]!
    const color: number[] = []
    prim.getAttribute('COLOR_0')!.getElement(4, color)
    expect(color.map((v) => Math.round(v * 255))).toEqual([255, 200, 0])
    const position: number[] = []
    prim.getAttribute('POSITION')!.getElement(4, position)
    expect(position).toEqual([2, 0, 0])
  })

  it('keeps two ASCII solids as two meshes', async () => {
    const doc = await read(paths.twoSolids)
    expect(
      doc
        .getRoot()
        .listMeshes()
        .map((m) => m.getName()),
    ).toEqual(['testTriangle_1', 'testTriangle_2'])
  })

  it('reads OBJ vertex colours and one primitive per material', async () => {
    const colored = await read(paths.vertexColors)
    const prim = colored.getRoot().listMeshes()[0]!.listPrimitives()[0]!
    const colors = new Set<string>()
    const c: number[] = []
    for (let i = 0; i < prim.getAttribute('COLOR_0')!.getCount(); i++) colors.add(prim.getAttribute('COLOR_0')!.getElement(i, c).join(','))
    expect(colors.size).toBeGreaterThan(1)
    const usemtl = await read(paths.usemtl)
    const materials = usemtl
      .getRoot()
      .listMeshes()
      .flatMap((m) => m.listPrimitives().map((p) => p.getMaterial()?.getName()))
    expect(new Set(materials).size).toBe(3)
  })

  it('ear-clips concave polygons (a fan would overlap itself)', async () => {
    // An L of three unit squares, listed from a corner whose fan covers area 4.
    const obj = 'v 1 2 0\nv 0 2 0\nv 0 0 0\nv 2 0 0\nv 2 1 0\nv 1 1 0\nf 1 2 3 4 5 6\n'
    const doc = await readModel(platform, new TextEncoder().encode(obj), 'obj')
    const prim = doc.getRoot().listMeshes()[0]!.listPrimitives()[0]!
    const indices = prim.getIndices()!.getArray()!
    const p = prim.getAttribute('POSITION')!
    let area = 0
    const a: number[] = [],
      b: number[] = [],
      c: number[] = []
    for (let i = 0; i < indices.length; i += 3) {
      p.getElement(indices[i]!, a)
      p.getElement(indices[i + 1]!, b)
      p.getElement(indices[i + 2]!, c)
      area += Math.abs((b[0]! - a[0]!) * (c[1]! - a[1]!) - (b[1]! - a[1]!) * (c[0]! - a[0]!)) / 2
    }
    expect(indices.length).toBe(12)
    expect(area).toBeCloseTo(3, 6)
  })

  it('reads UTF-16 OBJ (which assimp itself cannot)', async () => {
    expect(countSceneTriangles(await read(paths.utf16))).toBe(12)
  })

  it('reads PLY float colours, normals and s/t UVs, and point clouds', async () => {
    const float = (await read(paths.floatColor)).getRoot().listMeshes()[0]!.listPrimitives()[0]!
    expect(float.getAttribute('COLOR_0')!.getType()).toBe('VEC4')
    const uv = (await read(paths.cubeUv)).getRoot().listMeshes()[0]!.listPrimitives()[0]!
    expect(uv.getAttribute('TEXCOORD_0')!.getCount()).toBe(24)
    expect(uv.getAttribute('NORMAL')!.getCount()).toBe(24)
    const cloud = await read(paths.points)
    expect(primitiveCount(cloud, 0)).toBe(4)
    const color: number[] = []
    cloud.getRoot().listMeshes()[0]!.listPrimitives()[0]!.getAttribute('COLOR_0')!.getElement(0, color)
    expect(color.every((v) => v >= 0 && v <= 1)).toBe(true)
  })

  it("reads a PLY's t pointing up, as Blender wrote cube_uv.ply and assimp reads it, and writes it back so", async () => {
    const text = await readFile(paths.cubeUv, 'latin1')
    const body = text
      .slice(text.indexOf('end_header') + 'end_header'.length)
      .trim()
      .split('\n')
      .slice(0, 24)
    // Each vertex line: x y z nx ny nz s t. glTF's v is 1 − t.
    const expected = body.map((line) => {
      const n = line.trim().split(/\s+/).map(Number)
      return `${n.slice(0, 3).map((x) => x.toFixed(3))} uv ${n[6]!.toFixed(3)},${(1 - n[7]!).toFixed(3)}`
    })
    const corners = (doc: Document) => {
      const prim = doc.getRoot().listMeshes()[0]!.listPrimitives()[0]!
      const position = prim.getAttribute('POSITION')!
      const uv = prim.getAttribute('TEXCOORD_0')!
      return Array.from(
        { length: uv.getCount() },
        (_, i) =>
          `${position.getElement(i, [] as number[]).map((x) => x.toFixed(3))} uv ${uv.getElement(i, [] as number[]).map((x) => x.toFixed(3))}`,
      )
    }
    const doc = await read(paths.cubeUv)
    expect(new Set(corners(doc))).toEqual(new Set(expected))
    if (cli) {
      // assimp's own reading of the file, through its glTF writer.
      const dir = await mkdtemp(join(tmpdir(), 'mos-ply-uv-'))
      try {
        await promisify(execFile)('assimp', ['export', paths.cubeUv, join(dir, 'cube.glb'), '-fglb2'])
        const viaAssimp = await platform.io.readBinary(new Uint8Array(await readFile(join(dir, 'cube.glb'))))
        expect(new Set(corners(viaAssimp).map((c) => c.replace(/-0\.000/g, '0.000')))).toEqual(
          new Set(expected.map((c) => c.replace(/-0\.000/g, '0.000'))),
        )
      } finally {
        await rm(dir, { recursive: true, force: true })
      }
    }
    const again = await readModel(platform, writePly(doc).bytes, 'ply')
    expect(new Set(corners(again))).toEqual(new Set(expected))
  })

  it('takes the images `comment TextureFile` names (MeshLab, Agisoft) from the upload, a primitive per texture a face chooses', async () => {
    const text = await readFile(paths.cubeUv, 'latin1')
    const logo = new Uint8Array(await readFile(paths.logo))
    const checker = new Uint8Array(await readFile(paths.checker))
    const named = (header: string, ply: string) => ply.replace('format ascii 1.0\n', `format ascii 1.0\n${header}`)
    const warnings: string[] = []
    const logger = Object.assign(new Logger(Logger.Verbosity.WARN), { warn: (message: string) => void warnings.push(message) })
    const files = (entries: Record<string, Uint8Array>) => createUploadResolver(new Map(Object.entries(entries)), 'cube.ply')
    // One texture: every face draws with it.
    const one = readPly(new TextEncoder().encode(named('comment TextureFile logo file.png\n', text)), {
      resolve: files({ 'logo file.png': logo }),
      logger,
    })
    const [prim] = one.getRoot().listMeshes()[0]!.listPrimitives()
    expect(Buffer.from(prim!.getMaterial()!.getBaseColorTexture()!.getImage()!).equals(Buffer.from(logo))).toBe(true)
    expect(prim!.getAttribute('TEXCOORD_0')).not.toBeNull()
    expect(warnings).toEqual([])
    // Two textures, each face's texnumber choosing: the first three quads the logo, the other three the checker.
    let face = 0
    const chosen = named('comment TextureFile logo.png\ncomment TextureFile checker.png\n', text)
      .replace('property list uchar uint vertex_indices\n', 'property list uchar uint vertex_indices\nproperty int texnumber\n')
      .replace(/^4( \d+){4}$/gm, (line) => `${line} ${face++ < 3 ? 0 : 1}`)
    expect(face).toBe(6)
    const two = readPly(new TextEncoder().encode(chosen), { resolve: files({ 'logo.png': logo, 'checker.png': checker }), logger })
    const prims = two.getRoot().listMeshes()[0]!.listPrimitives()
    expect(prims.map((p) => [p.getIndices()!.getCount() / 3, p.getAttribute('POSITION')!.getCount()])).toEqual([
      [6, 12],
      [6, 12],
    ])
    expect(prims.map((p) => p.getMaterial()!.getBaseColorTexture()!.getImage()!.byteLength)).toEqual([logo.byteLength, checker.byteLength])
    expect(countSceneTriangles(two)).toBe(12)
    // A texture the upload lacks: the faces stay, untextured, and a warning names the file.
    const alone = readPly(new TextEncoder().encode(named('comment TextureFile logo.png\n', text)), { logger })
    expect(alone.getRoot().listMaterials()).toEqual([])
    expect(warnings).toEqual(['[ply] texture "logo.png" is not in the upload; dropped'])
  })

  it('writes base colour maps as MeshLab does (comment TextureFile, a face texnumber, -1 for none), zipped with the images', async () => {
    const text = await readFile(paths.cubeUv, 'latin1')
    const logo = new Uint8Array(await readFile(paths.logo))
    const checker = new Uint8Array(await readFile(paths.checker))
    let face = 0
    const chosen = text
      .replace('format ascii 1.0\n', 'format ascii 1.0\ncomment TextureFile logo.png\ncomment TextureFile checker.png\n')
      .replace('property list uchar uint vertex_indices\n', 'property list uchar uint vertex_indices\nproperty int texnumber\n')
      .replace(/^4( \d+){4}$/gm, (line) => `${line} ${face++ < 3 ? 0 : 1}`)
    const resolve = createUploadResolver(new Map(Object.entries({ 'logo.png': logo, 'checker.png': checker })), 'cube.ply')
    const doc = readPly(new TextEncoder().encode(chosen), { resolve })
    const platform = await loadPlatform()
    // Each corner's position and UV, under the image its part draws with.
    const cornersByImage = (model: Document) => {
      const byImage: Record<string, string[]> = {}
      for (const prim of model.getRoot().listMeshes()[0]!.listPrimitives()) {
        const image = prim.getMaterial()?.getBaseColorTexture()?.getImage()
        const key = image ? (Buffer.from(image).equals(Buffer.from(logo)) ? 'logo' : 'checker') : 'none'
        const position = prim.getAttribute('POSITION')!
        const uv = prim.getAttribute('TEXCOORD_0')!
        const indices: ArrayLike<number> = prim.getIndices()!.getArray()!
        const corners = Array.from(indices, (i) =>
          [...position.getElement(i, [] as number[]), ...uv.getElement(i, [] as number[])]
            .map((x) => x.toFixed(4).replace(/^-(0\.0+)$/, '$1'))
            .join(' '),
        )
        byImage[key] = [...(byImage[key] ?? []), ...corners].sort()
      }
      return byImage
    }
    const written = writePly(doc)
    expect(written.extension).toBe('zip')
    const entries = unzipSync(written.bytes)
    expect(Object.keys(entries).sort()).toEqual(['checker.png', 'logo.png', 'model.ply'])
    expect(Buffer.from(entries['logo.png']!).equals(Buffer.from(logo))).toBe(true)
    expect(Buffer.from(entries['checker.png']!).equals(Buffer.from(checker))).toBe(true)
    const header = new TextDecoder('latin1').decode(entries['model.ply']!).split('end_header')[0]!
    expect(header).toContain('comment TextureFile logo.png\ncomment TextureFile checker.png\n')
    expect(header).toContain('property int texnumber\n')
    const back = await readModel(platform, written.bytes, 'zip')
    expect(Object.keys(cornersByImage(back)).sort()).toEqual(['checker', 'logo'])
    expect(cornersByImage(back)).toEqual(cornersByImage(doc))
    if (cli) expect(await assimpPlyTriangles(entries)).toBe(12)
    // The checker's part without its map: it draws with none (-1), the logo's part still with the logo.
    doc.getRoot().listMaterials()[1]!.setBaseColorTexture(null)
    const mixed = writePly(doc)
    const mixedEntries = unzipSync(mixed.bytes)
    expect(Object.keys(mixedEntries).sort()).toEqual(['logo.png', 'model.ply'])
    const again = cornersByImage(await readModel(platform, mixed.bytes, 'zip'))
    expect(again).toEqual({ logo: cornersByImage(doc).logo, none: cornersByImage(doc).none })
    expect(again.none).toHaveLength(18)
    // One map on every part: no texnumber, as MeshLab writes a single texture.
    for (const material of doc.getRoot().listMaterials()) material.setBaseColorTexture(doc.getRoot().listTextures()[0]!)
    const single = new TextDecoder('latin1').decode(unzipSync(writePly(doc).bytes)['model.ply']!).split('end_header')[0]!
    expect(single).toContain('comment TextureFile logo.png\n')
    expect(single).not.toContain('texnumber')
  })

  it("refuses a PLY whose vertex lines lack the list its header declares for them, saying which (Blender 2.77's issue623.ply)", async () => {
    const text = await readFile(paths.issue623, 'latin1')
    expect(text).toMatch(/element vertex \d+\n(property float \w+\n)+property list uchar uint vertex_indices\n/)
    const firstX = /end_header\n(\S+)/.exec(text)![1]!
    await expect(read(paths.issue623)).rejects.toThrow(
      `invalid PLY: a vertex's vertex_indices list starts with ${Number(firstX)}, not a length (does each vertex line hold the list its header declares?)`,
    )
  })
})
