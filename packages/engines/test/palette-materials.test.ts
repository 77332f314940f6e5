import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  ColorUtils,
  type Document,
  Document as DocumentClass,
  type Material,
  type Primitive,
  type Texture,
  type vec4,
} from '@gltf-transform/core'
import type { Transform as UvTransform } from '@gltf-transform/extensions'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import { createEnginePool, loadPlatform, type MergeReport, paletteMaterials, type PaletteReport } from '../src/index.ts'
import { colouredAssembly } from './support/assembly.ts'
import { compressFileWith } from './support/compress-file.ts'

const PARTS = ['cow', 'spot', 'teapot', 'suzanne', 'fandisk'] as const
const { available, paths } = corpusFiles({
  cow: shared('obj', 'cow.obj'),
  spot: shared('obj', 'spot.obj'),
  teapot: shared('obj', 'teapot.obj'),
  suzanne: shared('obj', 'suzanne.obj'),
  fandisk: shared('obj', 'fandisk.obj'),
  engine: assimp('glTF2', '2CylinderEngine-glTF-Binary', '2CylinderEngine.glb'),
})

const byte = (value: number) => Math.round(value * 255)

/** A material's base colour (sRGB, as a texture stores it) and roughness/metalness, on 8 bits each. */
function factorsOf(material: Material): string {
  const srgb = ColorUtils.convertLinearToSRGB(material.getBaseColorFactor().slice(0, 3) as vec4, [0, 0, 0, 0] as vec4)
  return [...srgb.slice(0, 3), material.getBaseColorFactor()[3], material.getRoughnessFactor(), material.getMetallicFactor()]
    .map(byte)
    .join()
}

type Pixels = { data: Buffer; width: number; height: number }

async function pixelsOf(
  material: Material,
  slot: 'base' | 'mr',
): Promise<{ pixels: Pixels; uv: (u: number, v: number) => number[] } | null> {
  const texture = slot === 'base' ? material.getBaseColorTexture() : material.getMetallicRoughnessTexture()
  const info = slot === 'base' ? material.getBaseColorTextureInfo() : material.getMetallicRoughnessTextureInfo()
  if (!texture || !info) return null
  const { data, info: size } = await sharp(texture.getImage()!).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
  const transform = info.getExtension<UvTransform>('KHR_texture_transform')
  const [ox, oy] = transform?.getOffset() ?? [0, 0]
  const [sx, sy] = transform?.getScale() ?? [1, 1]
  return { pixels: { data, width: size.width, height: size.height }, uv: (u, v) => [ox + sx * u, oy + sy * v] }
}

function sample(pixels: Pixels, [u, v]: number[]): number[] {
  const x = Math.min(pixels.width - 1, Math.floor(u! * pixels.width))
  const y = Math.min(pixels.height - 1, Math.floor(v! * pixels.height))
  const at = (y * pixels.width + x) * 4
  return [...pixels.data.subarray(at, at + 4)]
}

/**
 * The drawn surface's area per look (base colour, alpha, roughness, metalness on 8 bits), in world
 * units: read from each material's factors, or from its palette textures at each triangle's coordinates.
 */
async function areaByLook(doc: Document): Promise<Map<string, number>> {
  const areas = new Map<string, number>()
  for (const node of doc.getRoot().listNodes()) {
    const mesh = node.getMesh()
    if (!mesh) continue
    const world = node.getWorldMatrix()
    for (const prim of mesh.listPrimitives()) {
      const look = await lookOf(prim)
      for (const [a, b, c] of triangles(prim, world)) {
        const area = triangleArea(a!, b!, c!)
        const key = look(a!.uv)
        areas.set(key, (areas.get(key) ?? 0) + area)
      }
    }
  }
  return areas
}

async function lookOf(prim: Primitive): Promise<(uv: number[]) => string> {
  // Without a material a primitive draws with glTF's default, which a new material's factors are.
  const material = prim.getMaterial() ?? new DocumentClass().createMaterial()
  const base = await pixelsOf(material, 'base')
  if (!base) return () => factorsOf(material)
  const mr = await pixelsOf(material, 'mr')
  return (uv) => {
    const [r, g, b, a] = sample(base.pixels, base.uv(uv[0]!, uv[1]!))
    const [, roughness, metalness] = mr
      ? sample(mr.pixels, mr.uv(uv[0]!, uv[1]!))
      : [0, byte(material.getRoughnessFactor()), byte(material.getMetallicFactor())]
    return [r, g, b, a, roughness, metalness].join()
  }
}

type Corner = { p: number[]; uv: number[] }

function* triangles(prim: Primitive, world: number[]): Generator<Corner[]> {
  const position = prim.getAttribute('POSITION')!
  const texcoord = prim.getAttribute('TEXCOORD_0')
  const indices = prim.getIndices()
  const count = indices ? indices.getCount() : position.getCount()
  const corner = (i: number): Corner => {
    const [x, y, z] = position.getElement(i, [0, 0, 0])
    const p = [0, 1, 2].map((row) => world[row]! * x! + world[row + 4]! * y! + world[row + 8]! * z! + world[row + 12]!)
    return { p, uv: texcoord ? texcoord.getElement(i, []) : [0, 0] }
  }
  for (let t = 0; t + 2 < count; t += 3) yield [0, 1, 2].map((k) => corner(indices ? indices.getScalar(t + k) : t + k))
}

function triangleArea(a: Corner, b: Corner, c: Corner): number {
  const u = [0, 1, 2].map((i) => b.p[i]! - a.p[i]!)
  const v = [0, 1, 2].map((i) => c.p[i]! - a.p[i]!)
  const cross = [u[1]! * v[2]! - u[2]! * v[1]!, u[2]! * v[0]! - u[0]! * v[2]!, u[0]! * v[1]! - u[1]! * v[0]!]
  return Math.hypot(...cross) / 2
}

/** Every look the input draws is drawn on the same area, within `share` (the grid drops sliver triangles). */
function expectSameLooks(before: Map<string, number>, after: Map<string, number>, share = 0.01): void {
  expect([...after.keys()].sort()).toEqual([...before.keys()].sort())
  for (const [look, area] of before) expect(Math.abs(after.get(look)! / area - 1), look).toBeLessThanOrEqual(share)
}

function drawCalls(doc: Document): number {
  return doc
    .getRoot()
    .listNodes()
    .reduce((sum, node) => sum + (node.getMesh()?.listPrimitives().length ?? 0), 0)
}

/** palette=true (Mos extension) on an assembly of corpus meshes in their own colours, through the engine thread. */
describe.skipIf(!available)('compress with palette=true', async () => {
  const pool = createEnginePool({ threads: 1 })
  const platform = await loadPlatform()
  const compressFile = compressFileWith(pool, platform)
  let dir = ''
  let path = ''
  let looks = new Map<string, number>()
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mos-palette-'))
    path = join(dir, 'assembly.glb')
    const doc = await colouredAssembly(
      platform,
      PARTS.map((name) => paths[name]),
    )
    looks = await areaByLook(doc)
    await writeFile(path, await platform.io.writeBinary(doc))
  })
  afterAll(async () => {
    await pool.destroy()
    await rm(dir, { recursive: true, force: true })
  })

  for (const engine of ['meshopt', 'draco'] as const) {
    it(`gathers five coloured parts into one palette material that merge joins (${engine}); every colour covers the area it did`, async () => {
      const merged = await compressFile(path, { engine, merge: true })
      const { output, details } = await compressFile(path, { engine, merge: true, palette: true })
      const palette = details.palette as PaletteReport
      expect(palette).toMatchObject({ materials_before: 5, materials_after: 1, entries: 5 })
      expect(palette.textures.map((texture) => texture.slot).sort()).toEqual(['baseColor', 'metallicRoughness'])
      const written = output.getRoot().listTextures()
      expect(written.map((texture) => texture.getSize())).toEqual(palette.textures.map(({ width, height }) => [width, height]))
      expect(output.getRoot().listMaterials()).toHaveLength(1)
      // Suzanne alone brings normals: two vertex layouts, two draw calls where merge alone kept five.
      expect((merged.details.merge as MergeReport).draw_calls_after).toBe(5)
      expect((details.merge as MergeReport).draw_calls_after).toBe(2)
      expect(drawCalls(output)).toBe(2)
      expectSameLooks(looks, await areaByLook(output))
      expect(details.notes).toEqual(
        expect.arrayContaining([
          expect.stringContaining(
            'materials: 5 without textures became 1, reading their baseColor and metallicRoughness factors from palette textures of 5 entries',
          ),
        ]),
      )
    })
  }

  it("takes a part without a material as glTF's default look (white, metallic, rough), so merge joins it with the rest", async () => {
    const doc = await colouredAssembly(
      platform,
      PARTS.map((name) => paths[name]),
    )
    doc.getRoot().listMeshes()[0]!.listPrimitives()[0]!.setMaterial(null)
    const bare = join(dir, 'bare.glb')
    await writeFile(bare, await platform.io.writeBinary(doc))
    const { output, details } = await compressFile(bare, { engine: 'meshopt', merge: true, palette: true })
    expect(details.palette).toMatchObject({ materials_before: 5, materials_after: 1, entries: 5 })
    expect(drawCalls(output)).toBe(2)
    expectSameLooks(await areaByLook(doc), await areaByLook(output))
    // Left without a palette (texture_max_size too small), the part keeps no material: nothing stands in.
    const kept = await compressFile(bare, { engine: 'meshopt', merge: true, palette: true, texture_max_size: 8 })
    expect(kept.details.palette).toBeUndefined()
    expect(kept.output.getRoot().listMaterials()).toHaveLength(4)
  })

  it('lays the palette out within what coarse texture coordinates tell apart: Draco with 2 bits holds 3 blocks a row', async () => {
    const { output, details } = await compressFile(path, { engine: 'draco', merge: true, palette: true, texcoord_quantization_bits: 2 })
    const palette = details.palette as PaletteReport
    expect(palette.textures.map(({ width, height }) => [width, height])).toEqual([
      [16, 8],
      [16, 8],
    ])
    expectSameLooks(looks, await areaByLook(output))
  })

  it('leaves the materials as they were, and says why, when texture_max_size leaves no room for a palette', async () => {
    const { output, details } = await compressFile(path, { engine: 'meshopt', merge: true, palette: true, texture_max_size: 8 })
    expect(details.palette).toBeUndefined()
    expect(output.getRoot().listMaterials()).toHaveLength(5)
    expect(details.notes).toEqual(expect.arrayContaining([expect.stringContaining('palette: 5 distinct materials do not fit')]))
    expectSameLooks(looks, await areaByLook(output), 0.01)
  })

  it("writes what merge alone writes, byte for byte, where merge could join too few colours: 2CylinderEngine's parts are meshes drawn by several nodes", async () => {
    const merged = await compressFile(paths.engine, { engine: 'meshopt', merge: true })
    const paletted = await compressFile(paths.engine, { engine: 'meshopt', merge: true, palette: true })
    expect(paletted.details.palette).toBeUndefined()
    expect(Buffer.from(paletted.bytes).equals(Buffer.from(merged.bytes))).toBe(true)
  })
})

/** `count` one-triangle parts side by side, each its own mesh, node and material (`dress` sets it up). */
function parts(count: number, dress: (material: Material, i: number) => void): Document {
  const doc = new DocumentClass()
  const buffer = doc.createBuffer()
  const scene = doc.createScene()
  for (let i = 0; i < count; i++) {
    const position = doc
      .createAccessor()
      .setType('VEC3')
      .setArray(new Float32Array([i, 0, 0, i + 1, 0, 0, i, 1, 0]))
      .setBuffer(buffer)
    const material = doc.createMaterial()
    dress(material, i)
    const prim = doc.createPrimitive().setAttribute('POSITION', position).setMaterial(material)
    scene.addChild(doc.createNode().setMesh(doc.createMesh().addPrimitive(prim)))
  }
  return doc
}

/** The palette pixel each primitive's coordinates point at, against the colour its material had. */
async function sampledColours(doc: Document): Promise<string[]> {
  const seen: string[] = []
  const decoded = new Map<Texture, Pixels>()
  for (const mesh of doc.getRoot().listMeshes()) {
    for (const prim of mesh.listPrimitives()) {
      const texture = prim.getMaterial()!.getBaseColorTexture()!
      let pixels = decoded.get(texture)
      if (!pixels) {
        const { data, info } = await sharp(texture.getImage()!).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
        decoded.set(texture, (pixels = { data, width: info.width, height: info.height }))
      }
      seen.push(sample(pixels, prim.getAttribute('TEXCOORD_0')!.getElement(0, [0, 0])).join())
    }
  }
  return seen
}

describe('the palette on generated parts', () => {
  it('lays out 5 000 colours in rows of 64 (256×512 px), each part reading its own', async () => {
    const colour = (i: number): vec4 => [(i % 17) / 16, (Math.floor(i / 17) % 17) / 16, Math.floor(i / 289) / 17, 1]
    const doc = parts(5000, (material, i) => material.setBaseColorFactor(colour(i)))
    const expected = doc
      .getRoot()
      .listMeshes()
      .map((mesh) => {
        const srgb = ColorUtils.convertLinearToSRGB(
          mesh.listPrimitives()[0]!.getMaterial()!.getBaseColorFactor().slice(0, 3) as vec4,
          [0, 0, 0, 0] as vec4,
        )
        return [...srgb.slice(0, 3).map(byte), 255].join()
      })
    const report = await paletteMaterials(doc, { texcoordBits: 12 }, [])
    expect(report).toMatchObject({ materials_before: 5000, materials_after: 1, entries: 5000 })
    expect(report!.textures).toEqual([expect.objectContaining({ slot: 'baseColor', width: 256, height: 512 })])
    expect(await sampledColours(doc)).toEqual(expected)
  })

  it('leaves materials that differ in more than 64 ways besides their colours as they were, and says so', async () => {
    const doc = parts(70, (material, i) => material.setBaseColorFactor([i / 70, 0.5, 0.5, 1]).setExtras({ part: i }))
    const notes: string[] = []
    expect(await paletteMaterials(doc, { texcoordBits: 12 }, notes)).toBeUndefined()
    expect(notes).toEqual([expect.stringContaining('differ in more than 64 ways besides their colours')])
    expect(doc.getRoot().listMaterials()).toHaveLength(70)
    expect(doc.getRoot().listTextures()).toHaveLength(0)
  })
})
