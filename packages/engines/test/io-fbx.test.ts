import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Document } from '@gltf-transform/core'
import { afterAll, describe, expect, it } from 'vitest'
import { ASSIMP_MODELS, assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import {
  countMeshTriangles,
  countSceneTriangles,
  createEnginePool,
  documentBounds,
  loadPlatform,
  readModel,
  writeModel,
} from '../src/index.ts'
import { checkFbxInput } from '../src/io/assimp-input-limits.ts'
import { loadAssimp, releaseLargeAssimpHeap } from '../src/io/assimp-module.ts'
import { encodeFbxBinary, fbx, fbxNode } from '../src/io/fbx-binary.ts'
import { readFbx } from '../src/io/fbx.ts'
import { createUploadResolver } from '../src/io/upload-files.ts'
import { quaternionToEulerXyz } from '../src/io/fbx-writer.ts'
import { primitiveVisibleTriangles } from '../src/geometry-stats.ts'
import { assimpInfo } from '../../../test/support/assimp-info.ts'
import { nestUnderAwkwardTransforms } from './support/nested-transforms.ts'

const { available, paths } = corpusFiles({
  box: assimp('FBX', 'box.fbx'),
  compressedArrays: assimp('FBX', 'boxWithCompressedCTypeArray.FBX'),
  huesitos: assimp('FBX', 'huesitos.fbx'),
  spider: assimp('FBX', 'spider.fbx'),
  spiderTexture: assimp('OBJ', 'SpiderTex.jpg'),
  ascii: assimp('FBX', 'embedded_ascii', 'box.FBX'),
  embedded: assimp('FBX', 'box_orphant_embedded_texture.fbx'),
  globalSettings: assimp('FBX', 'global_settings.fbx'),
  transparent: assimp('FBX', 'transparentTest.fbx'),
  boxTextured: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
  engine: assimp('glTF2', '2CylinderEngine-glTF-Binary', '2CylinderEngine.glb'),
  knight: shared('glb', 'chr_knight.glb'),
})

describe.skipIf(!available)('FBX', async () => {
  const platform = await loadPlatform()
  const dir = await mkdtemp(join(tmpdir(), 'mos-fbx-'))
  afterAll(() => rm(dir, { recursive: true, force: true }))
  const read = async (path: string) => readModel(platform, new Uint8Array(await readFile(path)), 'fbx')

  describe('reading', () => {
    const cases = ['box', 'compressedArrays', 'huesitos', 'ascii', 'embedded', 'globalSettings'] as const
    for (const name of cases) {
      it(`${name} keeps the triangles assimp info reports`, async () => {
        const [doc, info] = await Promise.all([read(paths[name]), assimpInfo(paths[name])])
        expect(countMeshTriangles(doc)).toBe(info.meshTriangles)
      })
    }

    it('keeps skins, animations and the node tree (huesitos)', async () => {
      const doc = await read(paths.huesitos)
      const root = doc.getRoot()
      expect(root.listSkins().length).toBeGreaterThan(0)
      expect(root.listAnimations()[0]!.listChannels().length).toBeGreaterThan(0)
      const info = await assimpInfo(paths.huesitos)
      expect(root.listNodes().length).toBeGreaterThanOrEqual(info.nodes - 1) // assimp's RootNode may fold into the scene
      const prim = root.listMeshes()[0]!.listPrimitives()[0]!
      expect(prim.getAttribute('NORMAL')).not.toBeNull()
      expect(prim.getAttribute('JOINTS_0')).not.toBeNull()
    })

    it('welds the unwelded vertices assimp exports', async () => {
      const doc = await read(paths.box)
      const vertices = doc.getRoot().listMeshes()[0]!.listPrimitives()[0]!.getAttribute('POSITION')!.getCount()
      expect(vertices).toBeLessThan(36) // 12 triangles unwelded would be 36 corners
    })

    it('drops degenerate triangles only where assimp info does (spider: visible triangles match)', async () => {
      const [doc, info] = await Promise.all([read(paths.spider), assimpInfo(paths.spider)])
      let visible = 0
      for (const mesh of doc.getRoot().listMeshes()) for (const prim of mesh.listPrimitives()) visible += primitiveVisibleTriangles(prim)
      expect(visible).toBe(info.meshTriangles)
    })

    it('loads the WASM module once, and drops it after a job that grew its heap past the bound', async () => {
      const first = await loadAssimp(platform)
      await read(paths.box)
      expect(await loadAssimp(platform)).toBe(first)
      expect(releaseLargeAssimpHeap(platform, first)).toBe(false) // 16 MiB heap: kept
      expect(releaseLargeAssimpHeap(platform, first, 0)).toBe(true)
      const second = await loadAssimp(platform)
      expect(second).not.toBe(first)
      expect(countMeshTriangles(await read(paths.box))).toBe(12)
      expect(await loadAssimp(platform)).toBe(second)
    })

    it('takes embedded textures from binary and ASCII FBX as PNG', async () => {
      for (const path of [paths.embedded, paths.ascii]) {
        const textures = (await read(path)).getRoot().listTextures()
        expect(textures.length).toBe(1)
        expect(textures[0]!.getMimeType()).toBe('image/png')
        expect(textures[0]!.getImage()!.subarray(1, 4)).toEqual(new TextEncoder().encode('PNG'))
      }
    })

    it('resolves textures referenced by path from supplied resources, case-insensitively', async () => {
      const bytes = new Uint8Array(await readFile(paths.spider))
      const without = await readFbx(platform, bytes)
      expect(without.getRoot().listTextures()).toHaveLength(0)
      const withTexture = await readFbx(platform, bytes, {
        resolve: createUploadResolver(
          new Map([['textures/spidertex.JPG', new Uint8Array(await readFile(paths.spiderTexture))]]),
          'model.fbx',
        ),
      })
      const textures = withTexture.getRoot().listTextures()
      expect(textures).toHaveLength(1)
      expect(textures[0]!.getMimeType()).toBe('image/jpeg')
      const users = withTexture
        .getRoot()
        .listMaterials()
        .filter((m) => m.getBaseColorTexture() === textures[0])
      expect(users.length).toBeGreaterThan(0)
    })
  })

  describe('bad input', () => {
    const fail = async (bytes: Uint8Array) => {
      const error = await readModel(platform, bytes, 'fbx').then(
        () => undefined,
        (e: Error) => e,
      )
      expect(error).toBeInstanceOf(Error)
      return error!.message
    }

    it('refuses truncated and garbage files with a reason', async () => {
      const bytes = new Uint8Array(await readFile(paths.spider))
      expect(await fail(bytes.subarray(0, bytes.byteLength / 2))).toMatch(/malformed binary FBX: .*truncated/)
      expect(await fail(new Uint8Array(4096).map((_, i) => (i * 7919) % 251))).toMatch(/could not read the FBX file/)
      expect(await fail(new TextEncoder().encode('; FBX 7.3.0 project file\nObjects: {'))).toMatch(/could not read the FBX file/)
    })

    it('fails every file of the corpus invalid/ folder (none is .fbx or .dae), read as fbx and as dae', async () => {
      const folder = join(ASSIMP_MODELS, 'invalid')
      for (const name of await readdir(folder)) {
        const bytes = new Uint8Array(await readFile(join(folder, name)))
        for (const format of ['fbx', 'dae']) {
          const message = await readModel(platform, bytes, format).then(
            () => 'read without error',
            (e: Error) => e.message,
          )
          expect(message, `${name} as ${format}`).toMatch(/^(empty file|could not read the (FBX|DAE) file .+|malformed binary FBX: .+)$/)
        }
      }
    })

    it('refuses a binary FBX whose zero bytes were replaced, saying so (transparentTest.fbx, which Debian assimp refuses too)', async () => {
      const bytes = new Uint8Array(await readFile(paths.transparent))
      // Every zero byte of this file is a space: its header and its node records alike.
      expect(bytes.subarray(20, 23)).toEqual(new Uint8Array([0x20, 0x1a, 0x20]))
      expect(await fail(bytes)).toBe(
        "corrupt binary FBX: its header's zero byte is 0x20 (a binary file handled as text, its zero bytes replaced?)",
      )
      // The same bytes with the header's zero put back still fail, at assimp: the records are as damaged.
      const header = bytes.slice()
      header[20] = 0
      expect(await fail(header)).toMatch(/^(could not read the FBX file|malformed binary FBX)/)
    })

    it('refuses declared huge arrays before allocating, binary and ASCII', async () => {
      const file = encodeFbxBinary([fbxNode('Objects', [], [fbxNode('Vertices', [fbx.doubles([1, 2, 3])])])])
      checkFbxInput(file) // the small original passes
      const at = Buffer.from(file).indexOf('Vertices') + 'Vertices'.length + 1 // after the 'd' type code
      const huge = file.slice()
      new DataView(huge.buffer).setUint32(at, 0x10000000, true)
      expect(await fail(huge)).toBe('FBX array of 268435456 elements (2147483648 bytes) exceeds the limit of 536870912 bytes')
      const ascii = new TextEncoder().encode(
        '; FBX 7.3.0 project file\nObjects:  {\n Geometry: 1, "Geometry::", "Mesh" {\n  Vertices: *900000000 {\n a: 0\n }\n }\n}\n',
      )
      expect(await fail(ascii)).toMatch(/FBX file declares 900000000 elements/)
    })

    it('refuses many arrays that add up past the total bound', async () => {
      const vertices = () => fbxNode('Vertices', [fbx.doubles([1, 2, 3])])
      const file = encodeFbxBinary([fbxNode('Objects', [], [vertices(), vertices(), vertices()])])
      const limits = { maxInputBytes: 1 << 20, maxArrayBytes: 24, maxTotalArrayBytes: 48 }
      expect(() => checkFbxInput(file, limits)).toThrow('FBX arrays add up to more than the limit of 48 bytes')
      expect(() => checkFbxInput(file, { ...limits, maxTotalArrayBytes: 72 })).not.toThrow()
    })

    it('become failed results through the pool, which keeps working', async () => {
      const pool = createEnginePool({ threads: 1 })
      try {
        const bytes = new Uint8Array(await readFile(paths.box))
        const bad = await pool.run({
          name: 'compress',
          input: { bytes: bytes.subarray(0, 3000) },
          format: 'fbx',
          options: { engine: 'draco' },
        })
        expect(bad).toEqual({ ok: false, message: expect.stringMatching(/^malformed binary FBX/) })
        const good = await pool.run({ name: 'compress', input: { path: paths.huesitos }, format: 'fbx', options: { engine: 'meshopt' } })
        if (!good.ok) throw new Error(good.message)
        const output = await platform.io.readBinary(good.bytes!)
        expect(countMeshTriangles(output)).toBe(120)
      } finally {
        await pool.destroy()
      }
    })
  })

  describe('writing', () => {
    for (const name of ['boxTextured', 'engine', 'knight'] as const) {
      it(`${name}.glb → fbx reopens in assimp and in our reader with the same triangles and bounds`, async () => {
        const source = await readModel(platform, new Uint8Array(await readFile(paths[name])), 'glb')
        const written = await writeModel(platform, source, 'fbx')
        expect(written.extension).toBe('fbx')
        const out = join(dir, `${name}.fbx`)
        await writeFile(out, written.bytes)
        const info = await assimpInfo(out, { raw: true })
        expect(info.meshTriangles).toBe(countMeshTriangles(source))
        const back = await readModel(platform, written.bytes, 'fbx')
        expect(countSceneTriangles(back)).toBe(countSceneTriangles(source))
        expectSameBounds(back, source)
      })
    }

    it('keeps base colour and alpha of an untextured material', async () => {
      const source = await readModel(platform, new Uint8Array(await readFile(paths.boxTextured)), 'glb')
      source.getRoot().listMaterials()[0]!.setBaseColorTexture(null).setBaseColorFactor([0.2, 0.4, 0.6, 0.5]).setAlphaMode('BLEND')
      const back = await readModel(platform, (await writeModel(platform, source, 'fbx')).bytes, 'fbx')
      const material = back.getRoot().listMaterials()[0]!
      expect(material.getBaseColorFactor().map((v) => Number(v.toFixed(4)))).toEqual([0.2, 0.4, 0.6, 0.5])
      expect(material.getAlphaMode()).toBe('BLEND')
    })

    it('keeps nested rotations (one at gimbal lock) and non-uniform scales', async () => {
      const source = nestUnderAwkwardTransforms(await readModel(platform, new Uint8Array(await readFile(paths.boxTextured)), 'glb'))
      const back = await readModel(platform, (await writeModel(platform, source, 'fbx')).bytes, 'fbx')
      expectSameBounds(back, source)
      expect(
        back
          .getRoot()
          .listNodes()
          .map((n) => n.getName()),
      ).toEqual(expect.arrayContaining(['outer', 'gimbal', 'inner']))
    })

    it('embeds the base colour texture and keeps UVs (v flipped back)', async () => {
      const source = await readModel(platform, new Uint8Array(await readFile(paths.boxTextured)), 'glb')
      const written = await writeModel(platform, source, 'fbx')
      const out = join(dir, 'textured.fbx')
      await writeFile(out, written.bytes)
      expect((await assimpInfo(out)).embeddedTextures).toBe(1)
      const back = await readModel(platform, written.bytes, 'fbx')
      const texture = back.getRoot().listMaterials()[0]!.getBaseColorTexture()!
      expect(texture.getImage()).toEqual(source.getRoot().listTextures()[0]!.getImage())
      expect(cornerSet(back)).toEqual(cornerSet(source))
    })

    it('keeps vertex colours and multiple materials per mesh', async () => {
      const doc = await readModel(platform, new Uint8Array(await readFile(paths.knight)), 'glb')
      const written = await writeModel(platform, doc, 'fbx')
      const back = await readModel(platform, written.bytes, 'fbx')
      const colored = (d: Document) =>
        d
          .getRoot()
          .listMeshes()
          .flatMap((m) => m.listPrimitives())
          .filter((p) => p.getAttribute('COLOR_0')).length > 0
      expect(colored(back)).toBe(colored(doc))
      expect(back.getRoot().listMaterials().length).toBe(doc.getRoot().listMaterials().length)
    })

    it('writes Euler angles in FBX order (R = Rz·Ry·Rx)', () => {
      const half = Math.SQRT1_2
      expect(quaternionToEulerXyz([half, 0, 0, half]).map(round)).toEqual([90, 0, 0])
      expect(quaternionToEulerXyz([0, half, 0, half]).map(round)).toEqual([0, 90, 0])
      // X by 90° then Z by 90°: q = qz · qx
      expect(quaternionToEulerXyz([0.5, 0.5, 0.5, 0.5]).map(round)).toEqual([90, 0, 90])
    })
  })
})

const round = (value: number) => Math.round(value) + 0 // no -0

function expectBoundsClose(doc: Document, info: { min: number[]; max: number[] }): void {
  const bounds = documentBounds(doc)
  const size = Math.max(...bounds.max.map((v, i) => v - bounds.min[i]!), 1e-6)
  for (let i = 0; i < 3; i++) {
    expect(Math.abs(bounds.min[i]! - info.min[i]!)).toBeLessThan(size * 0.001)
    expect(Math.abs(bounds.max[i]! - info.max[i]!)).toBeLessThan(size * 0.001)
  }
}

function expectSameBounds(a: Document, b: Document): void {
  expectBoundsClose(a, documentBounds(b))
}

/** The set of (position, uv) corners of the first mesh, rounded: independent of vertex order. */
function cornerSet(doc: Document): string[] {
  const prim = doc.getRoot().listMeshes()[0]!.listPrimitives()[0]!
  const position = prim.getAttribute('POSITION')!
  const uv = prim.getAttribute('TEXCOORD_0')!
  const out = new Set<string>()
  for (let i = 0; i < position.getCount(); i++) {
    out.add([...position.getElement(i, [] as number[]), ...uv.getElement(i, [] as number[])].map((v) => v.toFixed(4)).join(' '))
  }
  return [...out].sort()
}
