import { readFile } from 'node:fs/promises'
import type { Document } from '@gltf-transform/core'
import { quantize } from '@gltf-transform/functions'
import { describe, expect, it } from 'vitest'
import { assimp, corpusFiles, shared } from '../../../test/support/corpus.ts'
import { loadPlatform } from '../src/index.ts'
import { readModel } from '../src/io/index.ts'
import { quantizeStatic, type QuantizeStaticOptions } from '../src/geometry/quantize-static.ts'
import { expectSameGeometry } from './support/same-geometry.ts'

const { available, paths } = corpusFiles({
  engine: assimp('glTF2', '2CylinderEngine-glTF-Binary', '2CylinderEngine.glb'),
  knight: shared('glb', 'chr_knight.glb'),
  shapes: shared('glb', 'ShapeCollection.glb'),
  cubes: shared('gltf', 'many-cubes.gltf'),
  colors: assimp('PLY', 'float-color.ply'),
  morph: assimp('glTF2', 'glTF-Sample-Models', 'AnimatedMorphCube-glTF', 'AnimatedMorphCube.gltf'),
  skin: assimp('glTF2', 'simple_skin', 'simple_skin.gltf'),
  skeleton: assimp('FBX', 'animation_with_skeleton.fbx'),
  bones: assimp('FBX', 'huesitos.fbx'),
})

const MESHOPT: QuantizeStaticOptions = { pattern: /^(?!TEXCOORD_)/, quantizePosition: 14, quantizeNormal: 8, quantizeColor: 8 }
const FILTERED: QuantizeStaticOptions = { ...MESHOPT, pattern: /^(?!TEXCOORD_|NORMAL$|TANGENT$)/ }

describe.skipIf(!available)("quantizeStatic: glTF-Transform quantize()'s bytes on the scene grid", async () => {
  const platform = await loadPlatform()
  const read = async (path: string) => {
    const format = path.split('.').pop()!.toLowerCase()
    return format === 'gltf' || format === 'glb'
      ? platform.io.read(path)
      : readModel(platform, new Uint8Array(await readFile(path)), format)
  }
  const nodeMatrices = (doc: Document) =>
    doc
      .getRoot()
      .listNodes()
      .map((node) => [node.getName(), node.getMesh()?.getName() ?? null, ...node.getMatrix()])
  const skins = (doc: Document) =>
    doc
      .getRoot()
      .listSkins()
      .map((skin) => [skin.listJoints().map((j) => j.getName()), Array.from(skin.getInverseBindMatrices()?.getArray() ?? [])])

  /** The same file through both transforms: the same geometry, node matrices (bit for bit) and extensions. */
  async function expectSameAsQuantize(path: string, options: QuantizeStaticOptions, prepare?: (doc: Document) => unknown) {
    const [doc, reference] = [await read(path), await read(path)]
    for (const d of [doc, reference]) await prepare?.(d)
    await reference.transform(quantize({ ...options, quantizationVolume: 'scene' }))
    await doc.transform(quantizeStatic(options))
    expectSameGeometry(doc, reference)
    expect(nodeMatrices(doc)).toStrictEqual(nodeMatrices(reference))
    expect(skins(doc)).toStrictEqual(skins(reference))
    expect(
      doc
        .getRoot()
        .listExtensionsUsed()
        .map((e) => e.extensionName)
        .sort(),
    ).toEqual(
      reference
        .getRoot()
        .listExtensionsUsed()
        .map((e) => e.extensionName)
        .sort(),
    )
    return doc
  }

  const cases: [string, keyof typeof paths, QuantizeStaticOptions][] = [
    ['2CylinderEngine (82 nodes, 29 meshes)', 'engine', MESHOPT],
    ['2CylinderEngine, normals left to the octahedral filter', 'engine', FILTERED],
    ['chr_knight', 'knight', MESHOPT],
    ['ShapeCollection', 'shapes', MESHOPT],
    ['many-cubes', 'cubes', MESHOPT],
    ['a PLY with float vertex colours', 'colors', MESHOPT],
    ['16-bit positions and normals, 16-bit colours', 'colors', { ...MESHOPT, quantizePosition: 16, quantizeNormal: 16, quantizeColor: 16 }],
    ['a morphing cube: deltas scaled onto the grid, the volume widened by their reach', 'morph', MESHOPT],
    ['a skinned mesh: inverse bind matrices moved, weights sorted and quantized', 'skin', MESHOPT],
    ['a skinned, animated FBX (animation_with_skeleton)', 'skeleton', MESHOPT],
    ['a skinned FBX (huesitos)', 'bones', MESHOPT],
  ]
  for (const [label, file, options] of cases) it(label, () => expectSameAsQuantize(paths[file], options))

  it('widens the grid by a morph target reaching outside the mesh, as quantize() does', async () => {
    await expectSameAsQuantize(paths.morph, MESHOPT, (d) => {
      const delta = d.getRoot().listMeshes()[0]!.listPrimitives()[0]!.listTargets()[0]!.getAttribute('POSITION')!
      delta.setArray((delta.getArray() as Float32Array).map((v, i) => v * 10 - (i % 3 === 1 ? 3 : 0)))
    })
  })

  it('moves the mesh of an animated node to a child, as quantize() does', async () => {
    const doc = await expectSameAsQuantize(paths.cubes, MESHOPT, (d) => {
      const node = d
        .getRoot()
        .listNodes()
        .find((n) => n.getMesh())!
      const sampler = d.createAnimationSampler().setInput(
        d
          .createAccessor()
          .setArray(new Float32Array([0, 1]))
          .setType('SCALAR'),
      )
      sampler.setOutput(
        d
          .createAccessor()
          .setArray(new Float32Array([0, 0, 0, 1, 0, 0]))
          .setType('VEC3'),
      )
      d.createAnimation()
        .addSampler(sampler)
        .addChannel(d.createAnimationChannel().setTargetNode(node).setTargetPath('translation').setSampler(sampler))
    })
    const animated = doc.getRoot().listAnimations()[0]!.listChannels()[0]!.getTargetNode()!
    expect(animated.getMesh()).toBeNull()
    expect(animated.listChildren()[0]!.getMesh()).not.toBeNull()
  })

  it('compacts a primitive that uses fewer than half its vertices first, as quantize() does', async () => {
    const doc = await expectSameAsQuantize(paths.cubes, MESHOPT, (d) => {
      const prim = d.getRoot().listMeshes()[0]!.listPrimitives()[0]!
      for (const accessor of prim.listAttributes()) {
        const array = accessor.getArray()!
        const grown = new (array.constructor as Float32ArrayConstructor)(array.length * 4)
        grown.set(array)
        accessor.setArray(grown)
      }
    })
    expect(doc.getRoot().listMeshes()[0]!.listPrimitives()[0]!.getAttribute('POSITION')!.getCount()).toBe(24)
  })
})
