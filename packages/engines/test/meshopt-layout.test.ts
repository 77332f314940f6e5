import { readFile } from 'node:fs/promises'
import { Accessor, Document, type Material, type Primitive, TextureInfo, type Property } from '@gltf-transform/core'
import type { Transform as UvTransform } from '@gltf-transform/extensions'
import { unpartition } from '@gltf-transform/functions'
import { beforeAll, describe, expect, it } from 'vitest'
import { generateGrid } from '../../../bench/mesh.ts'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import { expectSameGeometry } from '../../../test/support/geometry.ts'
import { embeddedGltf, sharedWideUvs } from '../../../test/support/gltf-fixtures.ts'
import { compress, documentBounds, loadGltfValidator, loadPlatform, type Platform } from '../src/index.ts'
import { validateGltf } from '../src/ops/gltf-validation.ts'
import { glbJson } from '../src/io/gltf-limits.ts'
import { writeGlb } from '../src/io/gltf.ts'
import { dropDegenerateTriangles } from '../src/geometry/degenerate-triangles.ts'
import { shortestFloat32 } from '../src/geometry/float32.ts'
import { dropWhiteVertexColors } from '../src/ops/white-colors.ts'

const { available, paths } = corpusFiles({
  engine: assimp('glTF2', '2CylinderEngine-glTF-Binary', '2CylinderEngine.glb'),
  box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
  transforms: assimp('glTF2', 'textureTransform', 'TextureTransformTest.gltf'),
  clearcoat: assimp('glTF2', 'ClearCoat-glTF', 'ClearCoatTest.gltf'),
  morph: assimp('glTF2', 'glTF-Sample-Models', 'AnimatedMorphCube-glTF', 'AnimatedMorphCube.gltf'),
  skin: assimp('glTF2', 'simple_skin', 'simple_skin.gltf'),
  knight: shared('glb', 'chr_knight.glb'),
  pirate: shared('glb', 'pirate-meshopt.glb'),
  specGloss: assimp('glTF2', 'BoxTextured-glTF-pbrSpecularGlossiness', 'BoxTextured.gltf'),
  emptySampler: assimp('glTF2', 'issue_3269', 'texcoord_crash.gltf'),
})

let platform: Platform
beforeAll(async () => {
  platform = await loadPlatform()
})

async function load(path: string): Promise<Uint8Array> {
  return path.endsWith('.gltf') ? embeddedGltf(path) : new Uint8Array(await readFile(path))
}

async function meshopt(bytes: Uint8Array, level = 7): Promise<{ input: Document; output: Document; glb: Uint8Array }> {
  const read = () =>
    bytes[0] === 0x7b
      ? platform.io.readJSON({ json: JSON.parse(new TextDecoder().decode(bytes)), resources: {} })
      : platform.io.readBinary(bytes)
  const input = await read()
  const doc = await read()
  await doc.transform(compress({ engine: 'meshopt', level, meshoptEncoder: platform.meshoptEncoder }), unpartition())
  const glb = await writeGlb(platform.io, doc) // Mos's GLB writer, which compacts the JSON
  return { input, output: await platform.io.readBinary(glb), glb }
}

/**
 * Every texture lookup coordinate of a document, per texture slot: the UV set each texture reads,
 * then its KHR_texture_transform, for all primitives together (compression may merge duplicate
 * meshes and materials, so per-mesh or per-material keys would not line up).
 */
function lookups(doc: Document): Map<string, number[][]> {
  const out = new Map<string, number[][]>()
  for (const mesh of doc.getRoot().listMeshes()) {
    for (const prim of mesh.listPrimitives()) {
      const material = prim.getMaterial()
      if (!material) continue
      for (const [slot, info] of textureInfos(doc, material)) {
        const t = info.getExtension<UvTransform>('KHR_texture_transform')
        const uv = prim.getAttribute(`TEXCOORD_${t?.getTexCoord() ?? info.getTexCoord()}`)
        if (!uv) continue
        const [ox, oy] = t?.getOffset() ?? [0, 0]
        const [sx, sy] = t?.getScale() ?? [1, 1]
        const r = t?.getRotation() ?? 0
        const points = out.get(slot) ?? []
        for (let i = 0, el = [0, 0]; i < uv.getCount(); i++) {
          uv.getElement(i, el)
          const [x, y] = [el[0]! * sx, el[1]! * sy]
          points.push([ox + Math.cos(r) * x + Math.sin(r) * y, oy - Math.sin(r) * x + Math.cos(r) * y])
        }
        out.set(slot, points)
      }
    }
  }
  return out
}

function textureInfos(doc: Document, property: Property, prefix = ''): [string, TextureInfo][] {
  const edges = doc.getGraph().listChildEdges(property)
  const named = new Set(edges.filter((e) => e.getChild().propertyType === 'Texture').map((e) => e.getName()))
  return edges.flatMap((e): [string, TextureInfo][] => {
    const child = e.getChild()
    if (child instanceof TextureInfo) return named.has(e.getName().replace(/Info$/, '')) ? [[prefix + e.getName(), child]] : []
    if (e.getName() === 'extensions') return textureInfos(doc, child, `${prefix}${(child as { extensionName?: string }).extensionName}.`)
    return []
  })
}

/** Whether every point of `a` has a point of `b` within `tolerance` (per axis), and the other way round. */
function sameWithin(a: number[][], b: number[][], tolerance: number): boolean {
  const covered = (points: number[][], by: number[][]) => {
    const cells = new Map<string, number[][]>()
    const cell = (x: number, y: number) => `${Math.floor(x / tolerance)},${Math.floor(y / tolerance)}`
    for (const q of by) cells.set(cell(q[0]!, q[1]!), [...(cells.get(cell(q[0]!, q[1]!)) ?? []), q])
    return points.every((p) => {
      for (let dx = -1; dx <= 1; dx++) {
        for (let dy = -1; dy <= 1; dy++) {
          const near = cells.get(cell(p[0]! + dx * tolerance, p[1]! + dy * tolerance)) ?? []
          if (near.some((q) => Math.abs(p[0]! - q[0]!) <= tolerance && Math.abs(p[1]! - q[1]!) <= tolerance)) return true
        }
      }
      return false
    })
  }
  return covered(a, b) && covered(b, a)
}

function uvRange(points: number[][]): number {
  return Math.max(...[0, 1].map((k) => Math.max(...points.map((p) => p[k]!)) - Math.min(...points.map((p) => p[k]!))))
}

describe.skipIf(!available)('meshopt layout on real files', () => {
  it('stores positions as plain integers on one grid across the scene, in one view per stream kind', async () => {
    const { input, output, glb } = await meshopt(await load(paths.engine))
    expectSameGeometry(input, output)
    const positions = output
      .getRoot()
      .listMeshes()
      .flatMap((m) => m.listPrimitives().map((p) => p.getAttribute('POSITION')!))
    expect(positions.every((a) => a.getComponentType() === Accessor.ComponentType.UNSIGNED_SHORT && !a.getNormalized())).toBe(true)
    // One grid from 0: along the longest side the positions span exactly 2·(2^13 − 1) steps, and the
    // bounds move less than one step.
    const lowest = [0, 1, 2].map((k) => Math.min(...positions.map((a) => a.getMin([])[k]!)))
    const highest = [0, 1, 2].map((k) => Math.max(...positions.map((a) => a.getMax([])[k]!)))
    expect(lowest).toEqual([0, 0, 0])
    expect(Math.max(...highest)).toBe(16382)
    const a = documentBounds(input)
    const b = documentBounds(output)
    const extent = Math.max(...a.max.map((v, i) => v - a.min[i]!))
    for (let i = 0; i < 3; i++) {
      expect(Math.abs(a.min[i]! - b.min[i]!)).toBeLessThan(extent / 16382)
      expect(Math.abs(a.max[i]! - b.max[i]!)).toBeLessThan(extent / 16382)
    }
    const json = glbJson(glb) as { bufferViews: unknown[] }
    // Indices, positions, normals: three views for 29 meshes, and no JSON a reader assumes anyway.
    expect(json.bufferViews).toHaveLength(3)
    expect(JSON.stringify(json)).not.toMatch(/"normalized":false|"mode":4\b|"byteOffset":0\b/)
    const report = await validateGltf(loadGltfValidator(), glb, 100)
    expect(report!.report.issues.numErrors).toBe(0)
  })

  for (const name of ['box', 'knight', 'transforms', 'clearcoat'] as const) {
    it(`${name}: every texture lookup lands where the input's did, within half a 12-bit step`, async () => {
      const { input, output, glb } = await meshopt(await load(paths[name]))
      const before = lookups(input)
      const after = lookups(output)
      expect([...after.keys()]).toEqual([...before.keys()])
      expect(before.size).toBeGreaterThan(0)
      for (const [key, points] of before) {
        // Half a step of a 12-bit grid: over the material's own span, or over [0, 1] where
        // coordinates shared between materials keep the normalized layout (12 bits spread over
        // 16, whose replicated low bits add up to one 16-bit step).
        const tolerance = Math.max(uvRange(points), 1) / 4095 / 2 + 1 / 65535
        expect(sameWithin(points, after.get(key)!, tolerance), key).toBe(true)
      }
      // No error the input did not have (ClearCoatTest lacks tangents for its normal maps already).
      const errors = async (bytes: Uint8Array) => (await validateGltf(loadGltfValidator(), bytes, 100))!.report.issues.numErrors
      expect(await errors(glb)).toBeLessThanOrEqual(await errors(await load(paths[name])))
    })
  }

  it('box: texture coordinates outside [0, 1] become 12-bit integers with a texture transform', async () => {
    const { output } = await meshopt(await load(paths.box))
    const uv = output.getRoot().listMeshes()[0]!.listPrimitives()[0]!.getAttribute('TEXCOORD_0')!
    expect(uv.getComponentType()).toBe(Accessor.ComponentType.UNSIGNED_SHORT)
    expect(uv.getNormalized()).toBe(false)
    expect(Math.max(...uv.getMax([]))).toBe(4095)
    expect(
      output
        .getRoot()
        .listExtensionsRequired()
        .map((e) => e.extensionName),
    ).toContain('KHR_texture_transform')
  })

  it('keeps morph targets drawing the same shapes, and skins (their grid goes into the inverse bind matrices)', async () => {
    const morph = await meshopt(await load(paths.morph))
    expectSameGeometry(morph.input, morph.output)
    const targets = (d: Document) =>
      d
        .getRoot()
        .listMeshes()
        .flatMap((m) => m.listPrimitives().flatMap((p) => p.listTargets()))
    expect(targets(morph.output)).toHaveLength(targets(morph.input).length)
    const positions = morph.output.getRoot().listMeshes()[0]!.listPrimitives()[0]!
    expect(positions.getAttribute('POSITION')!.getNormalized()).toBe(false)
    expect(positions.listTargets()[0]!.getAttribute('POSITION')!.getNormalized()).toBe(false)
    // A skinned mesh ignores its node's transform, so it keeps quantize()'s normalized layout.
    const skin = await meshopt(await load(paths.skin))
    expect(skin.output.getRoot().listSkins()).toHaveLength(1)
    expect(skin.output.getRoot().listMeshes()[0]!.listPrimitives()[0]!.getAttribute('POSITION')!.getNormalized()).toBe(true)
  })

  it('uses the octahedral filter for normals only where it codes smaller than plain 8-bit xyz', async () => {
    const filtersOf = (glb: Uint8Array) => {
      const json = glbJson(glb) as { bufferViews: unknown[] }
      return (json.bufferViews as { extensions?: { EXT_meshopt_compression?: { filter?: string } } }[])
        .map((v) => v.extensions?.EXT_meshopt_compression?.filter)
        .filter(Boolean)
    }
    expect(filtersOf((await meshopt(await load(paths.engine))).glb)).toEqual(['OCTAHEDRAL'])
    // A smooth y-up surface: its normals sit on the octahedron's fold, where the codes jump.
    const grid = await meshopt(await generateGrid(120))
    expect(filtersOf(grid.glb)).toEqual([])
    const normals = grid.output.getRoot().listMeshes()[0]!.listPrimitives()[0]!.getAttribute('NORMAL')!
    expect([normals.getComponentType(), normals.getNormalized()]).toEqual([Accessor.ComponentType.BYTE, true])
  })

  it('writes an already meshopt-compressed input in the same layout, not through the extension the input registered', async () => {
    const { input, output, glb } = await meshopt(await load(paths.pirate))
    expectSameGeometry(input, output)
    expect(JSON.stringify(glbJson(glb))).not.toMatch(/"normalized":false|"mode":4\b/)
    expect((await validateGltf(loadGltfValidator(), glb, 100))!.report.issues.numErrors).toBe(0)
  })

  it('keeps primitives that share their accessors sharing them (ClearCoatTest: one sphere, one material each)', async () => {
    const { input, output, glb } = await meshopt(await load(paths.clearcoat))
    const distinct = (doc: Document, semantic: string) =>
      new Set(
        doc
          .getRoot()
          .listMeshes()
          .flatMap((m) => m.listPrimitives().map((p) => (semantic === 'indices' ? p.getIndices() : p.getAttribute(semantic)))),
      ).size
    // Before, every primitive got copies of its own: 24 position accessors for 24 primitives.
    const primitives = output
      .getRoot()
      .listMeshes()
      .flatMap((m) => m.listPrimitives()).length
    for (const semantic of ['POSITION', 'NORMAL', 'indices']) expect(distinct(output, semantic), semantic).toBeLessThan(primitives / 2)
    expectSameGeometry(input, output)
    const errors = async (bytes: Uint8Array) => (await validateGltf(loadGltfValidator(), bytes, 100))!.report.issues.numErrors
    expect(await errors(glb)).toBeLessThanOrEqual(await errors(await load(paths.clearcoat)))
  })

  it('drops a sampler that says nothing (texcoord_crash), and keeps one that names its filters (BoxTextured)', async () => {
    type Json = { samplers?: Record<string, unknown>[]; textures: { source: number; sampler?: number }[] }
    const source = JSON.parse(await readFile(paths.emptySampler, 'utf8')) as Json
    expect(source.samplers).toEqual([{}])
    expect(source.textures[0]!.sampler).toBe(0)
    const { input, output, glb } = await meshopt(await load(paths.emptySampler))
    const json = glbJson(glb) as Json
    expect(json.samplers).toBeUndefined()
    expect(json.textures).toEqual([{ source: 0 }])
    // Read back, the texture wraps and filters as the empty sampler said.
    const wrap = (doc: Document) =>
      doc
        .getRoot()
        .listMaterials()
        .flatMap((m) => m.getBaseColorTextureInfo()?.getWrapS() ?? [])
    expect(wrap(output)).toEqual(wrap(input))
    const box = glbJson((await meshopt(await load(paths.box))).glb) as Json
    expect(box.samplers).toEqual([{ magFilter: 9729, minFilter: 9986 }])
    expect(box.textures).toEqual([{ source: 0, sampler: 0 }])
  })

  it('drops chr_knight’s all-white vertex colours', async () => {
    const { input, output } = await meshopt(await load(paths.knight))
    expect(input.getRoot().listMeshes()[0]!.listPrimitives()[0]!.getAttribute('COLOR_0')).not.toBeNull()
    expect(output.getRoot().listMeshes()[0]!.listPrimitives()[0]!.getAttribute('COLOR_0')).toBeNull()
  })
})

describe('meshopt layout helpers', () => {
  it('warns, and keeps floats, for texture coordinates outside [0, 1] that two materials share', async () => {
    const doc = sharedWideUvs()
    const warnings: string[] = []
    doc.setLogger({ warn: (m: string) => warnings.push(m), info() {}, debug() {}, error() {} } as never)
    await doc.transform(compress({ engine: 'meshopt', meshoptEncoder: platform.meshoptEncoder }))
    expect(warnings).toEqual(['meshopt: TEXCOORD_0 kept as floats (outside [0, 1] and no texture grid covers it)'])
    expect(doc.getRoot().listMeshes()[0]!.listPrimitives()[0]!.getAttribute('TEXCOORD_0')!.getComponentType()).toBe(
      Accessor.ComponentType.FLOAT,
    )
  })

  it('drops only triangles that repeat a vertex, and keeps colours that are not all white', () => {
    const doc = new Document()
    const buffer = doc.createBuffer()
    const indices = doc
      .createAccessor()
      .setType('SCALAR')
      .setArray(new Uint16Array([0, 1, 2, 0, 0, 1, 1, 2, 2, 2, 1, 0]))
      .setBuffer(buffer)
    const color = doc
      .createAccessor()
      .setType('VEC4')
      .setArray(new Float32Array([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0.5]))
      .setBuffer(buffer)
    const prim = doc
      .createPrimitive()
      .setIndices(indices)
      .setAttribute('COLOR_0', color)
      .setMaterial(doc.createMaterial() as Material)
    doc.createMesh().addPrimitive(prim as Primitive)
    expect(dropDegenerateTriangles(doc)).toBe(2)
    expect([...prim.getIndices()!.getArray()!]).toEqual([0, 1, 2, 2, 1, 0])
    expect(dropWhiteVertexColors(doc)).toBe(0)
    expect(prim.getAttribute('COLOR_0')).toBe(color)
  })

  it('prints material factors with the digits a float32 needs, reading back as the same float32 (specular-glossiness box)', async () => {
    const { glb } = await meshopt(await load(paths.specGloss))
    const numbers = (value: unknown): number[] =>
      typeof value === 'number' ? [value] : typeof value === 'object' && value ? Object.values(value).flatMap(numbers) : []
    const written = numbers((glbJson(glb) as { materials: unknown[] }).materials)
    expect(written.length).toBeGreaterThan(0)
    for (const value of written) expect(value).toBe(shortestFloat32(value))
    const specular = (json: unknown) =>
      (json as { materials: { extensions: Record<string, { specularFactor: number[] }> }[] }).materials[0]!.extensions
        .KHR_materials_pbrSpecularGlossiness!.specularFactor
    expect(specular(glbJson(glb)).map(Math.fround)).toEqual(
      specular(JSON.parse(new TextDecoder().decode(await readFile(paths.specGloss)))).map(Math.fround),
    )
  })

  it('prints node transforms with the digits a float32 needs', () => {
    for (const value of [136.860107421875, Math.fround(0.1), 4.489659338746676e-11, 0.040827310983374325]) {
      const short = shortestFloat32(value)
      expect(Math.fround(short)).toBe(Math.fround(value))
      expect(
        String(short)
          .replace(/e.*$|[-.]/g, '')
          .replace(/^0+/, '').length,
      ).toBeLessThanOrEqual(9)
    }
    expect(shortestFloat32(136.860107421875)).toBe(136.8601)
    expect(shortestFloat32(3)).toBe(3)
  })
})
