import { readFile } from 'node:fs/promises'
import { Document, type Primitive } from '@gltf-transform/core'
import { type Clearcoat, KHRMaterialsClearcoat, KHRTextureTransform, type Transform as UvTransform } from '@gltf-transform/extensions'
import { tangents, unweld } from '@gltf-transform/functions'
import { generateTangents } from 'mikktspace'
import { afterAll, describe, expect, it } from 'vitest'
import { FOUR_COLOURS_PNG } from '../../../test/support/gltf-fixtures.ts'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { createEnginePool, loadPlatform } from '../src/index.ts'
import { addMissingTangents } from '../src/geometry/missing-tangents.ts'
import { writeModel } from '../src/io/index.ts'
import { glbJson } from '../src/io/gltf-limits.ts'
import { validateGlb } from './texture-fixtures.ts'
import { glbOf } from './support/compress-file.ts'
import { success } from './support/job-result.ts'

const { available, paths } = corpusFiles({
  texcoordCrash: assimp('glTF2', 'issue_3269', 'texcoord_crash.gltf'),
  badString: assimp('glTF2', 'wrongTypes', 'badString.gltf'),
  clearcoat: assimp('glTF2', 'ClearCoat-glTF', 'ClearCoatTest.gltf'),
})

type Json = {
  scenes: { name?: unknown }[]
  materials: {
    name?: string
    pbrMetallicRoughness?: { baseColorTexture?: unknown }
    extensions?: Record<string, Record<string, unknown>>
  }[]
  meshes: { primitives: { attributes: Record<string, number>; material?: number }[] }[]
}

/** A document with one PNG texture, and a maker of float accessors in its one buffer. */
function docWithTexture() {
  const doc = new Document()
  const buffer = doc.createBuffer()
  const accessor = (type: 'VEC2' | 'VEC3', values: number[]) =>
    doc.createAccessor().setType(type).setArray(new Float32Array(values)).setBuffer(buffer)
  const texture = doc.createTexture().setMimeType('image/png').setImage(Buffer.from(FOUR_COLOURS_PNG, 'base64'))
  return { doc, buffer, accessor, texture }
}

/** One textured material (a base colour map, and a clearcoat map on TEXCOORD_1) drawn by a primitive with both UV sets and by one with none. */
function sharedMaterialOneWithoutUvs(): Document {
  const { doc, accessor, texture } = docWithTexture()
  const clearcoat = doc.createExtension(KHRMaterialsClearcoat).createClearcoat().setClearcoatFactor(1).setClearcoatTexture(texture)
  clearcoat.getClearcoatTextureInfo()!.setTexCoord(1)
  const material = doc.createMaterial('Painted').setBaseColorTexture(texture).setExtension('KHR_materials_clearcoat', clearcoat)
  const position = accessor('VEC3', [0, 0, 0, 1, 0, 0, 0, 1, 0])
  const uv = accessor('VEC2', [0, 0, 1, 0, 0, 1])
  const mesh = doc.createMesh()
  mesh.addPrimitive(
    doc
      .createPrimitive()
      .setAttribute('POSITION', position)
      .setAttribute('TEXCOORD_0', uv)
      .setAttribute('TEXCOORD_1', uv)
      .setMaterial(material),
  )
  mesh.addPrimitive(
    doc
      .createPrimitive()
      .setAttribute('POSITION', accessor('VEC3', [0, 0, 1, 1, 0, 1, 0, 1, 1]))
      .setMaterial(material),
  )
  doc.createScene().addChild(doc.createNode().setMesh(mesh))
  return doc
}

describe('every glTF written is valid: textures a primitive has no UV set for', () => {
  it('are removed from a copy of the material for that primitive only; the other keeps the material, extensions and all', async () => {
    const platform = await loadPlatform()
    const doc = sharedMaterialOneWithoutUvs()
    const written = await writeModel(platform, doc, 'glb')
    expect((await validateGlb(written.bytes)).errors).toEqual([])
    expect(written.notes).toContain(
      'material "Painted": baseColorTexture, KHR_materials_clearcoat.clearcoatTexture removed where it could not be read (TEXCOORD_0, TEXCOORD_1 missing on 1 primitive)',
    )
    const json = glbJson(written.bytes) as Json
    const [withUvs, without] = json.meshes[0]!.primitives.map((prim) => json.materials[prim.material!]!)
    expect(withUvs!.pbrMetallicRoughness?.baseColorTexture).toBeDefined()
    expect(withUvs!.extensions?.KHR_materials_clearcoat?.clearcoatTexture).toBeDefined()
    expect(without!.name).toBe('Painted')
    expect(without!.pbrMetallicRoughness?.baseColorTexture).toBeUndefined()
    expect(without!.extensions?.KHR_materials_clearcoat).toEqual({ clearcoatFactor: 1, clearcoatRoughnessFactor: 0 })
    // The document as written: the primitive with its UVs still draws the first material, untouched.
    const first = doc.getRoot().listMeshes()[0]!.listPrimitives()[0]!.getMaterial()!
    expect(first.getExtension<Clearcoat>('KHR_materials_clearcoat')!.getClearcoatTexture()).not.toBeNull()
  })
})

describe('every glTF written is valid: UV sets numbered from 0', () => {
  it('renumbers a lone TEXCOORD_1 and every texture reading it: core slots, extension slots, a texture transform’s texCoord', async () => {
    const platform = await loadPlatform()
    const { doc, accessor, texture } = docWithTexture()
    const clearcoat = doc.createExtension(KHRMaterialsClearcoat).createClearcoat().setClearcoatFactor(1).setClearcoatTexture(texture)
    clearcoat.getClearcoatTextureInfo()!.setTexCoord(1)
    const material = doc
      .createMaterial()
      .setBaseColorTexture(texture)
      .setEmissiveTexture(texture)
      .setExtension('KHR_materials_clearcoat', clearcoat)
    material.getBaseColorTextureInfo()!.setTexCoord(1)
    // The emissive read goes through KHR_texture_transform, whose texCoord overrides the info's (0 here).
    const transform = doc.createExtension(KHRTextureTransform).createTransform().setScale([2, 2]).setTexCoord(1)
    material.getEmissiveTextureInfo()!.setExtension('KHR_texture_transform', transform)
    const prim = doc
      .createPrimitive()
      .setAttribute('POSITION', accessor('VEC3', [0, 0, 0, 1, 0, 0, 0, 1, 0]))
      .setAttribute('TEXCOORD_1', accessor('VEC2', [0, 0, 1, 0, 0, 1]))
      .setMaterial(material)
    doc.createScene().addChild(doc.createNode().setMesh(doc.createMesh().addPrimitive(prim)))
    const written = await writeModel(platform, doc, 'glb')
    expect((await validateGlb(written.bytes)).errors).toEqual([])
    const json = glbJson(written.bytes) as Json & {
      materials: { emissiveTexture?: { texCoord?: number; extensions?: Record<string, { texCoord?: number }> } }[]
    }
    expect(Object.keys(json.meshes[0]!.primitives[0]!.attributes).sort()).toEqual(['POSITION', 'TEXCOORD_0'])
    const [written0] = json.materials
    // Set 0 is glTF's default: a texture info reading it says nothing.
    expect(written0!.pbrMetallicRoughness?.baseColorTexture).toEqual({ index: 0 })
    expect(written0!.extensions?.KHR_materials_clearcoat?.clearcoatTexture).toEqual({ index: 0 })
    expect(written0!.emissiveTexture?.extensions?.KHR_texture_transform?.texCoord ?? 0).toBe(0)
  })
})

/** The UV values a primitive's base colour map reads, from the written file read again. */
function uvsReadByBaseColour(prim: Primitive): number[] {
  const set = prim.getMaterial()!.getBaseColorTextureInfo()!.getTexCoord()
  return [...(prim.getAttribute(`TEXCOORD_${set}`)?.getArray() ?? [])]
}

describe('every glTF written is valid: UV sets renumbered per primitive', () => {
  it('gives a shared material a copy where its primitives number their sets differently; morph targets renumbered with their base', async () => {
    const platform = await loadPlatform()
    const { doc, accessor, texture } = docWithTexture()
    const material = doc.createMaterial('Shared').setBaseColorTexture(texture).setEmissiveTexture(texture)
    material.getBaseColorTextureInfo()!.setTexCoord(1)
    // The emissive map reads set 1 through a texture transform, which the copy must not share with the original.
    const transform = doc.createExtension(KHRTextureTransform).createTransform().setScale([2, 2]).setTexCoord(1)
    material.getEmissiveTextureInfo()!.setExtension('KHR_texture_transform', transform)
    const triangle = (z: number) => accessor('VEC3', [0, 0, z, 1, 0, z, 0, 1, z])
    const uvs = { detail: [0, 0, 0.5, 0, 0, 0.5], lone: [0.25, 0.25, 1, 0.25, 0.25, 1] }
    // Both sets, the map reading set 1: nothing to renumber.
    const both = doc
      .createPrimitive()
      .setAttribute('POSITION', triangle(0))
      .setAttribute('TEXCOORD_0', accessor('VEC2', [0, 0, 1, 0, 0, 1]))
      .setAttribute('TEXCOORD_1', accessor('VEC2', uvs.detail))
      .setMaterial(material)
      // glTF gives every primitive of a mesh the same number of morph targets.
      .addTarget(doc.createPrimitiveTarget().setAttribute('POSITION', accessor('VEC3', [0, 0, 1, 0, 0, 1, 0, 0, 1])))
    // A lone set 1 (and a morph target moving it): renumbered to 0, and so must its map's read be, for it alone.
    const target = doc
      .createPrimitiveTarget()
      .setAttribute('POSITION', accessor('VEC3', [0, 0, 1, 0, 0, 1, 0, 0, 1]))
      .setAttribute('TEXCOORD_1', accessor('VEC2', [0.1, 0, 0.1, 0, 0.1, 0]))
    const lone = doc
      .createPrimitive()
      .setAttribute('POSITION', triangle(2))
      .setAttribute('TEXCOORD_1', accessor('VEC2', uvs.lone))
      .setMaterial(material)
      .addTarget(target)
    const mesh = doc.createMesh().addPrimitive(both).addPrimitive(lone).setWeights([0.5])
    doc.createScene().addChild(doc.createNode().setMesh(mesh))
    const written = await writeModel(platform, doc, 'glb')
    expect((await validateGlb(written.bytes)).errors).toEqual([])
    const [readBoth, readLone] = (await platform.io.readBinary(written.bytes)).getRoot().listMeshes()[0]!.listPrimitives()
    // Each primitive's map reads the UVs it read before: the shared material kept for one, a copy for the other.
    expect(uvsReadByBaseColour(readBoth!)).toEqual(uvs.detail)
    expect(uvsReadByBaseColour(readLone!)).toEqual(uvs.lone)
    expect(readBoth!.getMaterial()!.getBaseColorTextureInfo()!.getTexCoord()).toBe(1)
    expect(readLone!.getMaterial()!.getBaseColorTextureInfo()!.getTexCoord()).toBe(0)
    expect(readLone!.getMaterial()!.getName()).toBe('Shared')
    const emissiveSet = (prim: Primitive) =>
      prim.getMaterial()!.getEmissiveTextureInfo()!.getExtension<UvTransform>('KHR_texture_transform')!.getTexCoord()
    expect([emissiveSet(readBoth!), emissiveSet(readLone!)]).toEqual([1, 0])
    expect(readLone!.listTargets()[0]!.listSemantics().sort()).toEqual(['POSITION', 'TEXCOORD_0'])
  })
})

type Geometry = { positions: number[]; normals: number[]; uvs: number[]; indices: number[] }

/** A curved 4×4 grid of quads, indexed: smooth, its UVs without a seam. */
function curvedGrid(): Geometry {
  const g: Geometry = { positions: [], normals: [], uvs: [], indices: [] }
  for (let y = 0; y <= 4; y++) {
    for (let x = 0; x <= 4; x++) {
      const [u, v] = [x / 4, y / 4]
      g.positions.push(u, v, Math.sin(u * 2) * 0.3)
      const n = [-Math.cos(u * 2) * 0.6, 0, 1]
      g.normals.push(...n.map((k) => k / Math.hypot(...n)))
      g.uvs.push(u, v)
    }
  }
  for (let y = 0; y < 4; y++)
    for (let x = 0; x < 4; x++) g.indices.push(y * 5 + x, y * 5 + x + 1, y * 5 + x + 5, y * 5 + x + 1, y * 5 + x + 6, y * 5 + x + 5)
  return g
}

/** Two triangles sharing an edge, the second's UVs mirrored: its two shared vertices need a tangent of each handedness. */
function mirroredPair(): Geometry {
  return {
    positions: [0, 0, 0, 1, 0, 0, 0, 1, 0, -1, 0, 0],
    normals: [0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1],
    uvs: [0, 0, 1, 0, 0, 1, 1, 0],
    indices: [0, 1, 2, 0, 2, 3],
  }
}

/** A mesh drawn with a material whose only tangent-space map is a clearcoat normal map under a texture transform. */
function clearcoatMesh(geometry: () => Geometry = curvedGrid): { doc: Document; prim: Primitive } {
  const { positions, normals, uvs, indices } = geometry()
  const { doc, buffer, accessor, texture } = docWithTexture()
  const clearcoat = doc.createExtension(KHRMaterialsClearcoat).createClearcoat().setClearcoatFactor(1).setClearcoatNormalTexture(texture)
  const uvTransform = doc.createExtension(KHRTextureTransform).createTransform().setRotation(0.3).setScale([2, 0.5]).setOffset([0.1, 0.2])
  clearcoat.getClearcoatNormalTextureInfo()!.setExtension('KHR_texture_transform', uvTransform)
  const prim = doc
    .createPrimitive()
    .setAttribute('POSITION', accessor('VEC3', positions))
    .setAttribute('NORMAL', accessor('VEC3', normals))
    .setAttribute('TEXCOORD_0', accessor('VEC2', uvs))
    .setIndices(doc.createAccessor().setType('SCALAR').setArray(new Uint16Array(indices)).setBuffer(buffer))
    .setMaterial(doc.createMaterial('Coated').setExtension('KHR_materials_clearcoat', clearcoat))
  doc.createScene().addChild(doc.createNode().setMesh(doc.createMesh().addPrimitive(prim)))
  return { doc, prim }
}

/** The same mesh unwelded, its UVs moved as the renderer moves them, with glTF-Transform's tangents(): per corner, what MikkTSpace gives. */
async function referenceTangents(geometry: () => Geometry): Promise<Primitive> {
  const reference = clearcoatMesh(geometry)
  const info = reference.prim.getMaterial()!.getExtension<Clearcoat>('KHR_materials_clearcoat')!.getClearcoatNormalTextureInfo()!
  const t = info.getExtension<UvTransform>('KHR_texture_transform')!
  const uv = reference.prim.getAttribute('TEXCOORD_0')!
  for (let i = 0, el: number[] = []; i < uv.getCount(); i++) {
    const [x, y] = uv.getElement(i, el).map((value, k) => value * t.getScale()[k]!)
    const r = t.getRotation()
    uv.setElement(i, [t.getOffset()[0] + Math.cos(r) * x! + Math.sin(r) * y!, t.getOffset()[1] - Math.sin(r) * x! + Math.cos(r) * y!])
  }
  await reference.doc.transform(unweld(), tangents({ generateTangents }))
  return reference.prim
}

describe('every glTF written is valid: a tangent space the material cannot derive', () => {
  for (const [label, geometry, vertices] of [
    ['a smooth grid: no vertex split', curvedGrid, 25],
    ['two triangles mirrored in UV: their two shared vertices split', mirroredPair, 6],
  ] as const) {
    it(`is given as MikkTSpace tangents, glTF-Transform’s tangents() of the same triangles under the texture transform (${label})`, async () => {
      const before = await writeModel(await loadPlatform(), clearcoatMesh(geometry).doc, 'glb')
      expect(before.notes?.join()).toMatch(
        new RegExp(
          `TANGENT generated \\(MikkTSpace\\) for 1 primitive \\(${vertices} vertices\\): its clearcoat normal map needs a tangent space`,
        ),
      )
      expect((await validateGlb(before.bytes)).errors).toEqual([])

      const { doc, prim } = clearcoatMesh(geometry)
      expect(await addMissingTangents(doc)).toHaveLength(1)
      const expected = await referenceTangents(geometry)
      const indices = prim.getIndices()!.getArray()!
      expect(prim.getAttribute('TANGENT')!.getCount()).toBe(vertices)
      for (let corner = 0; corner < indices.length; corner++) {
        for (const semantic of ['TANGENT', 'POSITION'] as const) {
          const [a, b] = [
            expected.getAttribute(semantic)!.getElement(corner, []),
            prim.getAttribute(semantic)!.getElement(indices[corner]!, []),
          ]
          for (let k = 0; k < a.length; k++) expect(Math.abs(a[k]! - b[k]!), `${semantic} at corner ${corner}`).toBeLessThan(1e-5)
        }
      }
    })
  }

  it('gives a primitive without a whole triangle the default tangent, and leaves a primitive MikkTSpace fails on as it was, with a note', async () => {
    const { doc, prim } = clearcoatMesh()
    prim.setIndices(
      doc
        .createAccessor()
        .setType('SCALAR')
        .setArray(new Uint16Array([0, 1])),
    )
    expect(await addMissingTangents(doc)).toEqual([
      expect.stringMatching(/^TANGENT generated \(MikkTSpace\) for 1 primitive \(25 vertices\)/),
    ])
    expect(prim.getAttribute('TANGENT')!.getElement(0, [])).toEqual([1, 0, 0, 1])

    const failing = clearcoatMesh()
    const trap = () => {
      throw new WebAssembly.RuntimeError('unreachable')
    }
    expect(await addMissingTangents(failing.doc, trap)).toEqual([
      'TANGENT not generated for 1 primitive: MikkTSpace could not take their geometry (unreachable)',
    ])
    expect(failing.prim.getAttribute('TANGENT')).toBeNull()
  })

  it('gives two coated primitives drawing the same streams one tangent stream, and leaves no accessor unused', async () => {
    const { doc, prim } = clearcoatMesh()
    const twin = doc.createPrimitive().setIndices(prim.getIndices()).setMaterial(prim.getMaterial()!.clone())
    for (const semantic of prim.listSemantics()) twin.setAttribute(semantic, prim.getAttribute(semantic))
    doc.getRoot().listMeshes()[0]!.addPrimitive(twin)
    const accessors = doc.getRoot().listAccessors().length
    expect(await addMissingTangents(doc)).toEqual([
      expect.stringMatching(/^TANGENT generated \(MikkTSpace\) for 2 primitives \(25 vertices\)/),
    ])
    expect(twin.getAttribute('TANGENT')).toBe(prim.getAttribute('TANGENT'))
    expect(doc.getRoot().listAccessors()).toHaveLength(accessors + 1)
  })

  it('leaves a material with a normal map alone: renderers derive the tangent space from it', async () => {
    const { doc, prim } = clearcoatMesh()
    prim.getMaterial()!.setNormalTexture(doc.getRoot().listTextures()[0]!)
    expect(await addMissingTangents(doc)).toEqual([])
    expect(prim.getAttribute('TANGENT')).toBeNull()
  })
})

describe.skipIf(!available)('every glTF written is valid, on the corpus files that were not', async () => {
  const pool = createEnginePool({ threads: 1 })
  const platform = await loadPlatform()
  afterAll(() => pool.destroy())

  for (const [name, options] of [
    ['compress', { engine: 'meshopt' }],
    ['compress', { engine: 'draco' }],
  ] as const) {
    it(`texcoord_crash: the base colour map of the square without UVs is removed, the others' kept (${name} ${JSON.stringify(options)})`, async () => {
      const glb = await glbOf(platform, paths.texcoordCrash)
      const input = glbJson(glb) as Json
      expect((await validateGlb(glb)).errors.join()).toMatch(/MESH_PRIMITIVE_TOO_FEW_TEXCOORDS/)
      // A copy: the job takes its bytes over to the engine thread.
      const result = success(await pool.run({ name, input: { bytes: glb.slice() }, format: 'glb', options }))
      expect((await validateGlb(result.bytes!)).errors).toEqual([])
      expect(result.details?.notes).toContain(
        'material "TopRightMat": baseColorTexture removed where it could not be read (TEXCOORD_0 missing on 1 primitive)',
      )
      const textured = (json: Json) =>
        json.materials
          .filter((m) => m.pbrMetallicRoughness?.baseColorTexture)
          .map((m) => m.name)
          .sort()
      expect(textured(input)).toEqual(['BottomLeftMat', 'BottomRightMat', 'TopLeftMat', 'TopRightMat'])
      expect(textured(glbJson(result.bytes!) as Json)).toEqual(['BottomLeftMat', 'BottomRightMat', 'TopLeftMat'])
    })
  }

  it('badString: a scene named 42 is written named "42"', async () => {
    const source = JSON.parse(await readFile(paths.badString, 'utf8')) as Json
    expect(source.scenes[0]!.name).toBe(42)
    const result = success(
      await pool.run({
        name: 'compress',
        input: { bytes: await glbOf(platform, paths.badString) },
        format: 'glb',
        options: { engine: 'meshopt' },
      }),
    )
    expect((await validateGlb(result.bytes!)).errors).toEqual([])
    expect((glbJson(result.bytes!) as Json).scenes[0]!.name).toBe('42')
  })

  for (const [name, options] of [
    ['compress', { engine: 'meshopt' }],
    ['compress', { engine: 'draco' }],
    ['convert', { target_format: 'glb' }],
  ] as const) {
    it(`ClearCoatTest: the sphere with only a clearcoat normal map gets tangents, as do the spheres drawing the same streams, which stay shared (${name} ${JSON.stringify(options)})`, async () => {
      const glb = await glbOf(platform, paths.clearcoat)
      expect((await validateGlb(glb)).errors.join()).toMatch(/MESH_PRIMITIVE_NO_TANGENT_SPACE/)
      const result = success(await pool.run({ name, input: { bytes: glb }, format: 'glb', options }))
      expect((await validateGlb(result.bytes!)).errors).toEqual([])
      expect(((result.details?.notes ?? []) as string[]).join()).toMatch(
        /TANGENT generated \(MikkTSpace\) for \d+ primitives? \(\d+ vertices\)/,
      )
      const output = await platform.io.readBinary(result.bytes!)
      const prims = output
        .getRoot()
        .listMeshes()
        .flatMap((mesh) => mesh.listPrimitives())
      const coated = prims.filter((prim) => {
        const material = prim.getMaterial()
        return !material?.getNormalTexture() && material?.getExtension<Clearcoat>('KHR_materials_clearcoat')?.getClearcoatNormalTexture()
      })
      expect(coated.length).toBeGreaterThan(0)
      for (const prim of coated) {
        const tangent = prim.getAttribute('TANGENT')!
        const normal = prim.getAttribute('NORMAL')!
        for (let i = 0, t: number[] = [], n: number[] = []; i < tangent.getCount(); i++) {
          tangent.getElement(i, t)
          normal.getElement(i, n)
          expect(Math.abs(Math.hypot(t[0]!, t[1]!, t[2]!) - 1)).toBeLessThan(0.02)
          expect(Math.abs(t[3]!)).toBe(1)
          expect(Math.abs(t[0]! * n[0]! + t[1]! * n[1]! + t[2]! * n[2]!)).toBeLessThan(0.05)
        }
        // Draco and convert keep one primitive per sphere; the meshopt weld keeps spheres on shared streams shared.
        const sharing = prims.filter((other) => other.getAttribute('POSITION') === prim.getAttribute('POSITION'))
        expect(sharing.every((other) => other.getAttribute('TANGENT') === prim.getAttribute('TANGENT'))).toBe(true)
      }
    })
  }
})
