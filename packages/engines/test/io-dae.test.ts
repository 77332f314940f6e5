import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Document } from '@gltf-transform/core'
import { afterAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import {
  convertDocument,
  countMeshTriangles,
  countSceneTriangles,
  createEnginePool,
  documentBounds,
  loadPlatform,
  readModel,
  writeModel,
} from '../src/index.ts'
import { readDae } from '../src/io/dae.ts'
import { createUploadResolver, type ResolveFile } from '../src/io/upload-files.ts'
import { assimpInfo, unzipTo } from '../../../test/support/assimp-info.ts'
import { nestUnderAwkwardTransforms } from './support/nested-transforms.ts'

const { available, paths } = corpusFiles({
  duck: assimp('Collada', 'duck.dae'),
  duckTexture: assimp('Collada', 'duckCM.tga'),
  teapots: assimp('Collada', 'teapots.DAE'),
  bom: assimp('Collada', 'cube_UTF8BOM.dae'),
  utf16: assimp('Collada', 'cube_UTF16LE.dae'),
  tristrips: assimp('Collada', 'cube_tristrips.dae'),
  colors: assimp('Collada', 'kwxport_test_vcolors.dae'),
  sphere: assimp('Collada', 'sphere.dae'),
  boxTextured: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
  engine: assimp('glTF2', '2CylinderEngine-glTF-Binary', '2CylinderEngine.glb'),
  knight: shared('glb', 'chr_knight.glb'),
  clips: assimp('Collada', 'library_animation_clips.dae'),
  nestedAnimation: assimp('Collada', 'box_nested_animation.dae'),
})

describe.skipIf(!available)('COLLADA', async () => {
  const platform = await loadPlatform()
  const dir = await mkdtemp(join(tmpdir(), 'mos-dae-'))
  afterAll(() => rm(dir, { recursive: true, force: true }))
  const read = async (path: string) => readModel(platform, new Uint8Array(await readFile(path)), 'dae')

  describe('reading', () => {
    for (const name of ['duck', 'teapots', 'bom', 'tristrips', 'colors', 'sphere'] as const) {
      it(`${name} keeps the triangles assimp info reports`, async () => {
        const [doc, info] = await Promise.all([read(paths[name]), assimpInfo(paths[name])])
        expect(countMeshTriangles(doc)).toBe(info.meshTriangles)
        expect(
          doc
            .getRoot()
            .listMeshes()
            .every((m) => m.listPrimitives().every((p) => p.getAttribute('NORMAL'))),
        ).toBe(true)
      })
    }

    it('reads colours written after spaces, which assimp alone refuses (library_animation_clips.dae): every quad, the diffuse as base colour, both clips', async () => {
      await expect(assimpInfo(paths.clips)).rejects.toThrow()
      const text = await readFile(paths.clips, 'utf8')
      const quads = [...text.matchAll(/<p>([^<]*)<\/p>/g)].map((m) => m[1]!.trim().split(/\s+/).length)
      expect(new Set(quads)).toEqual(new Set([4]))
      const doc = await read(paths.clips)
      expect(countMeshTriangles(doc)).toBe(quads.length * 2)
      const diffuse = /<diffuse>\s*<color>([^<]*)<\/color>/.exec(text)![1]!.trim().split(/\s+/).map(Number)
      expect(
        doc
          .getRoot()
          .listMaterials()[0]!
          .getBaseColorFactor()
          .map((v) => v.toFixed(5)),
      ).toEqual(diffuse.map((v) => v.toFixed(5)))
      const clips = [...text.matchAll(/<animation_clip [^>]*end="([^"]+)"/g)].map((m) => Number(m[1]))
      const ends = doc
        .getRoot()
        .listAnimations()
        .map((a) => Math.max(...a.listSamplers().map((s) => s.getInput()!.getMax([0])[0]!)))
      expect(ends.length).toBe(clips.length)
      // Each clip's last key lies within one frame (1/24 s) of where the clip says it ends.
      ends.forEach((end, i) => expect(Math.abs(end - clips[i]!)).toBeLessThanOrEqual(1 / 24 + 1e-6))
    })

    it("reads a file whose animations assimp's glTF writer fails on (box_nested_animation.dae) without them, and says so", async () => {
      const pool = createEnginePool({ threads: 1 })
      try {
        const result = await pool.run({
          name: 'convert',
          input: { path: paths.nestedAnimation },
          format: 'dae',
          options: { target_format: 'glb' },
        })
        if (!result.ok) throw new Error(result.message)
        const doc = await platform.io.readBinary(result.bytes!)
        const declared = Number(/<polylist [^>]*count="(\d+)"/.exec(await readFile(paths.nestedAnimation, 'utf8'))![1])
        expect(countSceneTriangles(doc)).toBe(declared)
        expect(doc.getRoot().listSkins()).toHaveLength(1)
        expect(doc.getRoot().listAnimations()).toHaveLength(0)
        expect(result.details?.warnings).toContainEqual(
          expect.stringContaining('animations not carried: assimp reads them, but its glTF writer fails on them'),
        )
      } finally {
        await pool.destroy()
      }
    })

    it('reads UTF-16 files, which assimp itself refuses, like their UTF-8 twin', async () => {
      await expect(assimpInfo(paths.utf16)).rejects.toThrow()
      const [utf16, utf8] = await Promise.all([read(paths.utf16), read(paths.bom)])
      expect(countMeshTriangles(utf16)).toBe(countMeshTriangles(utf8))
      expect(documentBounds(utf16)).toEqual(documentBounds(utf8))
    })

    it('keeps vertex colours and UVs', async () => {
      const prims = (await read(paths.colors))
        .getRoot()
        .listMeshes()
        .flatMap((m) => m.listPrimitives())
      expect(prims.some((p) => p.getAttribute('COLOR_0'))).toBe(true)
      const duck = (await read(paths.duck)).getRoot().listMeshes()[0]!.listPrimitives()[0]!
      expect(duck.getAttribute('TEXCOORD_0')).not.toBeNull()
    })

    it('takes referenced textures from resources and turns TGA into PNG', async () => {
      const bytes = new Uint8Array(await readFile(paths.duck))
      expect((await readDae(platform, bytes)).getRoot().listTextures()).toHaveLength(0)
      const files = new Map([['duckCM.tga', new Uint8Array(await readFile(paths.duckTexture))]])
      const doc = await readDae(platform, bytes, { resolve: createUploadResolver(files, 'duck.dae') })
      const texture = doc.getRoot().listMaterials()[0]!.getBaseColorTexture()!
      expect(texture.getMimeType()).toBe('image/png')
      expect(texture.getSize()).toEqual([512, 512])
    })
  })

  describe('bad input', () => {
    const fail = async (bytes: Uint8Array) =>
      readModel(platform, bytes, 'dae').then(
        () => 'read without error',
        (e: Error) => e.message,
      )

    it('refuses truncated, garbage and non-COLLADA XML with a reason', async () => {
      const bytes = new Uint8Array(await readFile(paths.duck))
      expect(await fail(bytes.subarray(0, bytes.byteLength / 2))).toBe('could not read the DAE file (assimp: import error)')
      expect(await fail(new Uint8Array(4096).map((_, i) => (i * 7919) % 251))).toBe('could not read the DAE file (assimp: import error)')
      expect(await fail(new TextEncoder().encode('<?xml version="1.0"?><html><body/></html>'))).toBe(
        'could not read the DAE file (assimp: import error)',
      )
    })

    it('become failed results through the pool, which keeps working', async () => {
      const pool = createEnginePool({ threads: 1 })
      try {
        const bytes = new Uint8Array(await readFile(paths.duck))
        const bad = await pool.run({
          name: 'compress',
          input: { bytes: bytes.slice(0, 5000) },
          format: 'dae',
          options: { engine: 'draco' },
        })
        expect(bad).toEqual({ ok: false, message: 'could not read the DAE file (assimp: import error)' })
        const good = await pool.run({ name: 'compress', input: { path: paths.sphere }, format: 'dae', options: { engine: 'draco' } })
        if (!good.ok) throw new Error(good.message)
        expect(countMeshTriangles(await platform.io.readBinary(good.bytes!))).toBe(760)
      } finally {
        await pool.destroy()
      }
    })

    it('refuses declared huge counts before assimp grows its heap for them', async () => {
      const text = (await readFile(paths.tristrips, 'utf8')).replace(/(<float_array[^>]*count=")\d+/, '$1400000000')
      expect(await fail(new TextEncoder().encode(text))).toBe(
        'COLLADA file declares 400000000 elements (1600000000 bytes), over the limit of 536870912 bytes',
      )
    })
  })

  describe('writing', () => {
    // 2CylinderEngine (4 MB as COLLADA, slow through assimpjs's copy) is in scripts/roundtrip-fbx-dae.ts;
    // the nested-transform case below covers its deep rotated hierarchy here.
    for (const name of ['boxTextured', 'knight'] as const) {
      it(`${name}.glb → dae reopens in assimp and in our reader with the same triangles and bounds`, async () => {
        const source = await readModel(platform, new Uint8Array(await readFile(paths[name])), 'glb')
        const { daePath, resolve } = await writeDaeFiles(source, name)
        const info = await assimpInfo(daePath, { raw: true })
        expect(info.meshTriangles).toBe(countMeshTriangles(source))
        const back = await readDae(platform, new Uint8Array(await readFile(daePath)), { resolve })
        expect(countSceneTriangles(back)).toBe(countSceneTriangles(source))
        expectSameBounds(back, source)
        expect(back.getRoot().listTextures().length).toBe(source.getRoot().listTextures().length)
      })
    }

    it('keeps base colour and alpha of an untextured material', async () => {
      const source = await readModel(platform, new Uint8Array(await readFile(paths.boxTextured)), 'glb')
      source.getRoot().listMaterials()[0]!.setBaseColorTexture(null).setBaseColorFactor([0.2, 0.4, 0.6, 0.5]).setAlphaMode('BLEND')
      const back = await readModel(platform, (await writeModel(platform, source, 'dae')).bytes, 'dae')
      const material = back.getRoot().listMaterials()[0]!
      expect(material.getBaseColorFactor().map((v) => Number(v.toFixed(4)))).toEqual([0.2, 0.4, 0.6, 0.5])
      expect(material.getAlphaMode()).toBe('BLEND')
    })

    it('keeps nested rotations (one at gimbal lock) and non-uniform scales', async () => {
      const source = nestUnderAwkwardTransforms(await readModel(platform, new Uint8Array(await readFile(paths.boxTextured)), 'glb'))
      const { daePath, resolve } = await writeDaeFiles(source, 'nested')
      const back = await readDae(platform, new Uint8Array(await readFile(daePath)), { resolve })
      expectSameBounds(back, source)
      expect(
        back
          .getRoot()
          .listNodes()
          .map((n) => n.getName()),
      ).toEqual(expect.arrayContaining(['outer', 'gimbal', 'inner']))
    })

    it('puts the .dae and its textures in a zip, referenced by file name, with UVs kept', async () => {
      const source = await readModel(platform, new Uint8Array(await readFile(paths.boxTextured)), 'glb')
      const written = await writeModel(platform, source, 'dae')
      expect(written.extension).toBe('zip')
      const { daePath, resources, resolve } = await writeDaeFiles(source, 'zipped')
      expect(Object.keys(resources).sort()).toEqual(['model.dae', 'texture.png'])
      expect((await assimpInfo(daePath)).textureRefs).toEqual(['texture.png'])
      const back = await readDae(platform, new Uint8Array(await readFile(daePath)), { resolve })
      expect(back.getRoot().listTextures()[0]!.getImage()).toEqual(source.getRoot().listTextures()[0]!.getImage())
      expect(cornerSet(back)).toEqual(cornerSet(source))
    })

    it('writes a model without textures as a bare .dae', async () => {
      const written = await writeModel(platform, await readModel(platform, new Uint8Array(await readFile(paths.engine)), 'glb'), 'dae')
      expect(written.bytes.byteLength).toBeGreaterThan(1_000_000)
      expect(written.extension).toBe('dae')
      expect(new TextDecoder().decode(written.bytes.subarray(0, 200))).toContain(
        '<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">',
      )
    })

    it('keeps lines, drops points with a note (and FBX drops both with notes)', async () => {
      const dae = await convertDocument(platform, pointsLinesTriangle(), 'dae')
      const path = join(dir, 'lines.dae')
      await writeFile(path, dae.bytes)
      const info = await assimpInfo(path, { raw: true })
      expect([info.meshTriangles, info.meshLines]).toEqual([1, 2])
      expect(dae.notes).toEqual(['COLLADA cannot hold points: 1 points dropped'])
      const fbx = await convertDocument(platform, pointsLinesTriangle(), 'fbx')
      await writeFile(join(dir, 'lines.fbx'), fbx.bytes)
      expect((await assimpInfo(join(dir, 'lines.fbx'), { raw: true })).meshTriangles).toBe(1)
      expect(fbx.notes).toEqual(['FBX cannot hold points: 1 points dropped', 'FBX cannot hold lines: 2 line segments dropped'])
    })
  })

  /** Writes the document as COLLADA into its own folder (unzipping with the system's unzip when zipped). */
  async function writeDaeFiles(
    doc: Document,
    name: string,
  ): Promise<{ daePath: string; resources: Record<string, Uint8Array>; resolve: ResolveFile }> {
    const written = await writeModel(platform, doc, 'dae')
    const folder = join(dir, name)
    if (written.extension === 'dae') {
      await rm(folder, { recursive: true, force: true })
      await mkdir(folder)
      await writeFile(join(folder, 'model.dae'), written.bytes)
    } else {
      await writeFile(`${folder}.zip`, written.bytes)
      await unzipTo(`${folder}.zip`, folder)
    }
    const resources: Record<string, Uint8Array> = {}
    for (const entry of await readdir(folder)) resources[entry] = new Uint8Array(await readFile(join(folder, entry)))
    return { daePath: join(folder, 'model.dae'), resources, resolve: createUploadResolver(new Map(Object.entries(resources)), 'model.dae') }
  }
})

/** One triangle, a line strip of two segments and a point, each its own primitive. */
function pointsLinesTriangle(): Document {
  const doc = new Document()
  const buffer = doc.createBuffer()
  const mesh = doc.createMesh('mixed')
  const add = (mode: 0 | 3 | 4, positions: number[]) => {
    const position = doc.createAccessor().setType('VEC3').setArray(new Float32Array(positions)).setBuffer(buffer)
    mesh.addPrimitive(doc.createPrimitive().setMode(mode).setAttribute('POSITION', position))
  }
  // glTF modes: 4 triangles, 3 line strip, 0 points
  add(4, [0, 0, 0, 1, 0, 0, 0, 1, 0])
  add(3, [0, 0, 1, 1, 0, 1, 1, 1, 1])
  add(0, [2, 2, 2])
  doc.createScene().addChild(doc.createNode('mixed').setMesh(mesh))
  return doc
}

function expectSameBounds(a: Document, b: Document): void {
  const x = documentBounds(a)
  const y = documentBounds(b)
  const size = Math.max(...y.max.map((v, i) => v - y.min[i]!), 1e-6)
  for (let i = 0; i < 3; i++) {
    expect(Math.abs(x.min[i]! - y.min[i]!)).toBeLessThan(size * 0.001)
    expect(Math.abs(x.max[i]! - y.max[i]!)).toBeLessThan(size * 0.001)
  }
}

/** The set of (position, uv) corners of the first mesh, rounded: independent of vertex order. */
function cornerSet(doc: Document): string[] {
  const prim = doc.getRoot().listMeshes()[0]!.listPrimitives()[0]!
  const position = prim.getAttribute('POSITION')!
  const uv = prim.getAttribute('TEXCOORD_0')!
  const out = new Set<string>()
  for (let i = 0; i < position.getCount(); i++)
    out.add([...position.getElement(i, [] as number[]), ...uv.getElement(i, [] as number[])].map((v) => v.toFixed(4)).join(' '))
  return [...out].sort()
}
