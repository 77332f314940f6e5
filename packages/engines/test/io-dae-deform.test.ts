import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Document } from '@gltf-transform/core'
import { KHRTextureTransform } from '@gltf-transform/extensions'
import { afterAll, describe, expect, it } from 'vitest'
import { assimpInfo, unzipTo } from '../../../test/support/assimp-info.ts'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { documentBounds, loadPlatform, readDae, readModel, writeModel } from '../src/index.ts'
import { createUploadResolver } from '../src/io/upload-files.ts'

const { available, paths } = corpusFiles({
  skeleton: assimp('FBX', 'animation_with_skeleton.fbx'),
  huesitos: assimp('FBX', 'huesitos.fbx'),
  simpleSkin: assimp('glTF2', 'simple_skin', 'simple_skin.gltf'),
  morphCube: assimp('glTF2', 'glTF-Sample-Models', 'AnimatedMorphCube-glTF', 'AnimatedMorphCube.gltf'),
  boxTextured: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
  twoUvs: assimp('Collada', 'cube_with_2UVs.DAE'),
})

describe.skipIf(!available)('COLLADA (and FBX) output keeps skins, animations, maps and UV sets', async () => {
  const platform = await loadPlatform()
  const dir = await mkdtemp(join(tmpdir(), 'mos-dae-deform-'))
  afterAll(() => rm(dir, { recursive: true, force: true }))

  /** Writes `doc` as COLLADA into its own folder; returns the .dae's path, the files beside it and the writer's notes. */
  const writeDae = async (doc: Document, name: string) => {
    const written = await writeModel(platform, doc, 'dae')
    const notes = written.notes ?? []
    const folder = join(dir, name)
    if (written.extension === 'zip') {
      await writeFile(`${folder}.zip`, written.bytes)
      await unzipTo(`${folder}.zip`, folder)
    } else {
      await rm(folder, { recursive: true, force: true })
      await mkdir(folder)
      await writeFile(join(folder, 'model.dae'), written.bytes)
    }
    const files = new Map<string, Uint8Array>()
    for (const entry of await readdir(folder)) files.set(entry, new Uint8Array(await readFile(join(folder, entry))))
    const path = join(folder, 'model.dae')
    return { path, notes, back: await readDae(platform, files.get('model.dae')!, { resolve: createUploadResolver(files, 'model.dae') }) }
  }

  for (const [name, format] of [
    ['skeleton', 'fbx'],
    ['huesitos', 'fbx'],
    ['simpleSkin', 'gltf'],
  ] as const) {
    it(`${name}: assimp reads the bones and animations it reads from the source; our reader the joints, channels and durations`, async () => {
      const source = await readModel(platform, new Uint8Array(await readFile(paths[name])), format)
      const { path, notes, back } = await writeDae(source, name)
      const [ours, theirs] = await Promise.all([assimpInfo(path), assimpInfo(paths[name])])
      // assimp's COLLADA reader makes a bone only of a joint that weights some vertex (its FBX reader
      // keeps them all: huesitos has 9 joints, 8 of which weight vertices).
      const weighting = weightingJoints(source)
      expect(weighting).toBeGreaterThan(1)
      expect([ours.bones, ours.animations, ours.animationChannels]).toEqual([weighting, theirs.animations, theirs.animationChannels])
      expect(notes.filter((note) => /skin|animation/.test(note))).toEqual([])
      expect(
        back
          .getRoot()
          .listSkins()
          .map((skin) => skin.listJoints().length),
      ).toEqual([weighting])
      // The bind pose is where it was.
      const [a, b] = [documentBounds(source), documentBounds(back)]
      const size = Math.max(...a.max.map((v, i) => v - a.min[i]!))
      const corners = [...a.min.map((v, i) => [v, b.min[i]!]), ...a.max.map((v, i) => [v, b.max[i]!])]
      for (const [x, y] of corners) expect(Math.abs(x! - y!)).toBeLessThan(size * 1e-4)
      const summary = (doc: Document) =>
        doc
          .getRoot()
          .listAnimations()
          .map((animation) => ({
            nodes: new Set(animation.listChannels().map((channel) => channel.getTargetNode()!.getName())).size,
            duration: Math.max(...animation.listSamplers().map((sampler) => sampler.getInput()!.getMax([])[0]!)),
          }))
      const [before, after] = [summary(source), summary(back)]
      expect(after.map((a) => a.nodes)).toEqual(before.map((a) => a.nodes))
      after.forEach((a, i) => expect(a.duration).toBeCloseTo(before[i]!.duration, 5))
    })
  }

  it('animates the bones as the source does: a joint keeps its pose at every key time', async () => {
    const source = await readModel(platform, new Uint8Array(await readFile(paths.skeleton)), 'fbx')
    const { back } = await writeDae(source, 'skeleton-pose')
    // The one bone with many keys (Bone.006 in this file) is compared over its key times.
    const channelOf = (doc: Document, name: string, path: string) =>
      doc
        .getRoot()
        .listAnimations()[0]!
        .listChannels()
        .find((c) => c.getTargetNode()!.getName() === name && c.getTargetPath() === path)!
    const busiest = source
      .getRoot()
      .listAnimations()[0]!
      .listChannels()
      .reduce((a, b) => (b.getSampler()!.getInput()!.getCount() > a.getSampler()!.getInput()!.getCount() ? b : a))
    const name = busiest.getTargetNode()!.getName()
    for (const path of ['translation', 'rotation'] as const) {
      const a = channelOf(source, name, path).getSampler()!
      const b = channelOf(back, name, path).getSampler()!
      expect(b.getInput()!.getCount()).toBe(a.getInput()!.getCount())
      for (let k = 0; k < a.getInput()!.getCount(); k++) {
        const [x, y] = [a.getOutput()!.getElement(k, [] as number[]), b.getOutput()!.getElement(k, [] as number[])]
        // q and −q are the same rotation.
        const sign = path === 'rotation' && x.reduce((n, v, i) => n + v * y[i]!, 0) < 0 ? -1 : 1
        const scale = Math.max(1, ...x.map(Math.abs))
        x.forEach((v, i) => expect(Math.abs(v - sign * y[i]!)).toBeLessThan(scale * 1e-4))
      }
    }
  })

  it('names dropped morph targets and their weight animation in the notes', async () => {
    const source = await platform.io.read(paths.morphCube)
    const { path, notes, back } = await writeDae(source, 'morph')
    expect(notes).toEqual([
      'COLLADA cannot hold morph targets: 2 morph target(s) dropped (meshes written at rest)',
      '1 morph weight animation channel(s) of "Square" dropped with the morph targets (COLLADA animations here move nodes only)',
    ])
    expect((await assimpInfo(path)).meshTriangles).toBe(12)
    expect(back.getRoot().listAnimations()).toHaveLength(0)
  })

  it('keeps emissive and normal maps, a second UV set the normal map reads, and bakes KHR_texture_transform', async () => {
    const source = await readModel(platform, new Uint8Array(await readFile(paths.boxTextured)), 'glb')
    const material = source.getRoot().listMaterials()[0]!
    const texture = material.getBaseColorTexture()!
    const prim = source.getRoot().listMeshes()[0]!.listPrimitives()[0]!
    const uv0 = prim.getAttribute('TEXCOORD_0')!
    const uv1 = source
      .createAccessor()
      .setType('VEC2')
      .setArray(Float32Array.from(uv0.getArray() as Float32Array, (v) => v * 0.5))
      .setBuffer(uv0.getBuffer())
    prim.setAttribute('TEXCOORD_1', uv1)
    material.setEmissiveTexture(texture).setEmissiveFactor([1, 1, 1]).setNormalTexture(texture)
    material.getNormalTextureInfo()!.setTexCoord(1)
    const transform = source.createExtension(KHRTextureTransform).createTransform().setOffset([0.25, 0.5]).setScale([2, 3])
    material.getBaseColorTextureInfo()!.setExtension('KHR_texture_transform', transform)
    material.getEmissiveTextureInfo()!.setExtension('KHR_texture_transform', transform)

    const { path, notes, back } = await writeDae(source, 'maps')
    expect(notes).toEqual([
      'COLLADA cannot hold texture transforms: KHR_texture_transform of 1 base colour map(s) replaced by UVs baked with it',
    ])
    const backMaterial = back.getRoot().listMaterials()[0]!
    expect(backMaterial.getBaseColorTexture()).not.toBeNull()
    expect(backMaterial.getEmissiveTexture()).not.toBeNull()
    expect(backMaterial.getNormalTexture()).not.toBeNull()
    expect((await assimpInfo(path)).textureRefs).toEqual(['texture.png', 'texture.png', 'texture.png'])
    // assimp's glTF hand-over writes every texCoord as 0, so the normal map's set is read from the XML.
    const xml = await readFile(path, 'utf8')
    expect(xml).toMatch(/<bump><texture texture="sampler-0-normal" texcoord="UVSET1"\/><\/bump>/)
    expect(xml).toContain('<bind_vertex_input semantic="UVSET1" input_semantic="TEXCOORD" input_set="1"/>')
    // The base colour's UVs come back with the transform applied: offset + scale · uv.
    const expected = new Set<string>()
    for (let i = 0; i < uv0.getCount(); i++) {
      const [u, v] = uv0.getElement(i, [] as number[])
      expected.add(`${(0.25 + 2 * u!).toFixed(4)} ${(0.5 + 3 * v!).toFixed(4)}`)
    }
    const backPrim = back.getRoot().listMeshes()[0]!.listPrimitives()[0]!
    const got = new Set<string>()
    const backUv = backPrim.getAttribute('TEXCOORD_0')!
    for (let i = 0; i < backUv.getCount(); i++)
      got.add(
        backUv
          .getElement(i, [] as number[])
          .map((v) => v.toFixed(4))
          .join(' '),
      )
    expect([...got].sort()).toEqual([...expected].sort())
    expect(backPrim.getAttribute('TEXCOORD_1')).not.toBeNull()
  })

  it('keeps both UV sets of cube_with_2UVs.DAE, and notes the maps COLLADA has no place for', async () => {
    const source = await readModel(platform, new Uint8Array(await readFile(paths.twoUvs)), 'dae')
    const sets = (doc: Document) =>
      doc
        .getRoot()
        .listMeshes()[0]!
        .listPrimitives()[0]!
        .listSemantics()
        .filter((s) => s.startsWith('TEXCOORD_'))
    expect(sets(source)).toEqual(['TEXCOORD_0', 'TEXCOORD_1'])
    const box = await readModel(platform, new Uint8Array(await readFile(paths.boxTextured)), 'glb')
    const material = box.getRoot().listMaterials()[0]!
    material.setOcclusionTexture(material.getBaseColorTexture())
    const [{ back }, { notes }] = await Promise.all([writeDae(source, 'two-uvs'), writeDae(box, 'occlusion')])
    expect(sets(back)).toEqual(['TEXCOORD_0', 'TEXCOORD_1'])
    expect(notes).toEqual(['COLLADA cannot hold these material maps: 1 texture(s) dropped (occlusion 1)'])
  })

  it('FBX connects emissive and normal maps (read back by assimp and our reader) and notes the occlusion map', async () => {
    const source = await readModel(platform, new Uint8Array(await readFile(paths.boxTextured)), 'glb')
    const material = source.getRoot().listMaterials()[0]!
    const texture = material.getBaseColorTexture()!
    material.setEmissiveTexture(texture).setEmissiveFactor([1, 1, 1]).setNormalTexture(texture).setOcclusionTexture(texture)
    const written = await writeModel(platform, source, 'fbx')
    expect(written.notes).toEqual(['FBX cannot hold these material maps: 1 texture(s) dropped (occlusion 1)'])
    const back = (await readModel(platform, written.bytes, 'fbx')).getRoot().listMaterials()[0]!
    expect([back.getBaseColorTexture(), back.getEmissiveTexture(), back.getNormalTexture()].every((t) => t !== null)).toBe(true)
    expect(back.getOcclusionTexture()).toBeNull()
  })

  it('samples a cubic-spline channel to linear keys on its curve (with a note) and keeps STEP keys as STEP', async () => {
    const doc = await readModel(platform, new Uint8Array(await readFile(paths.boxTextured)), 'glb')
    const buffer = doc.getRoot().listBuffers()[0]!
    const [box] = doc
      .getRoot()
      .listNodes()
      .filter((node) => node.getMesh())
    const stepper = doc.createNode('stepper')
    doc.getRoot().listScenes()[0]!.addChild(stepper)
    const accessor = (type: 'SCALAR' | 'VEC3', values: number[]) =>
      doc.createAccessor().setType(type).setArray(new Float32Array(values)).setBuffer(buffer)
    // Translation x from 0 to 1 over 2 s, leaving with slope 3 (units per second) and arriving with slope 0:
    // per key (in-tangent, value, out-tangent).
    const cubic = doc
      .createAnimationSampler()
      .setInterpolation('CUBICSPLINE')
      .setInput(accessor('SCALAR', [0, 2]))
      .setOutput(accessor('VEC3', [0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0]))
    const step = doc
      .createAnimationSampler()
      .setInterpolation('STEP')
      .setInput(accessor('SCALAR', [0, 1]))
      .setOutput(accessor('VEC3', [1, 1, 1, 2, 2, 2]))
    doc
      .createAnimation('curves')
      .addSampler(cubic)
      .addSampler(step)
      .addChannel(doc.createAnimationChannel().setTargetNode(box!).setTargetPath('translation').setSampler(cubic))
      .addChannel(doc.createAnimationChannel().setTargetNode(stepper).setTargetPath('scale').setSampler(step))
    const { path, notes, back } = await writeDae(doc, 'curves')
    expect(notes).toEqual(['1 cubic-spline animation channel(s) of "curves" sampled to linear keys'])
    const xml = await readFile(path, 'utf8')
    expect(xml).toMatch(/<Name_array id="anim-0-1-interpolation-array" count="2">STEP STEP<\/Name_array>/)
    const channel = back
      .getRoot()
      .listAnimations()[0]!
      .listChannels()
      .find((c) => c.getTargetPath() === 'translation' && c.getTargetNode()!.getMesh())!
    const input = channel.getSampler()!.getInput()!
    const output = channel.getSampler()!.getOutput()!
    expect(input.getCount()).toBe(9)
    // Hermite: p(s) = (s³ − 2s² + s)·Δt·m0 + (−2s³ + 3s²)·p1 with p0 = 0, m1 = 0, Δt = 2.
    const hermite = (s: number) => (s ** 3 - 2 * s ** 2 + s) * 2 * 3 + (-2 * s ** 3 + 3 * s ** 2)
    for (let k = 0; k < input.getCount(); k++) {
      const time = input.getScalar(k)
      expect(output.getElement(k, [] as number[])[0]).toBeCloseTo(hermite(time / 2), 4)
    }
  })
})

/** How many of the skin's joints weight at least one vertex. */
function weightingJoints(doc: Document): number {
  const used = new Set<number>()
  for (const mesh of doc.getRoot().listMeshes())
    for (const prim of mesh.listPrimitives()) {
      const joints = prim.getAttribute('JOINTS_0')
      const weights = prim.getAttribute('WEIGHTS_0')
      if (!joints || !weights) continue
      for (let i = 0; i < joints.getCount(); i++) {
        const [j, w] = [joints.getElement(i, [] as number[]), weights.getElement(i, [] as number[])]
        j.forEach((joint, k) => {
          if (w[k]! > 0) used.add(joint)
        })
      }
    }
  return used.size
}
