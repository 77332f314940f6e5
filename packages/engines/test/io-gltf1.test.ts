import { readdirSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { type Document, getBounds, type mat4, MathUtils, Primitive, type vec3, type vec4 } from '@gltf-transform/core'
import type { Light } from '@gltf-transform/extensions'
import { unzipSync, zipSync } from 'fflate'
import sharp from 'sharp'
import { afterAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { embeddedGltf } from '../../../test/support/gltf-fixtures.ts'
import { countSceneTriangles, createEnginePool, type JobName, loadPlatform, type Platform } from '../src/index.ts'
import { success } from './support/job-result.ts'
import { validateGlb } from './texture-fixtures.ts'

const { available, paths } = corpusFiles({
  box: assimp('glTF', 'BoxTextured-glTF'),
  embedded: assimp('glTF', 'BoxTextured-glTF-Embedded', 'BoxTextured.gltf'),
  common: assimp('glTF', 'BoxTextured-glTF-MaterialsCommon'),
  truck: assimp('glTF', 'CesiumMilkTruck'),
  incorrect: assimp('glTF', 'IncorrectVertexArrays'),
  truncatedBinary: assimp('glTF', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
  box2: assimp('glTF2', 'BoxTextured-glTF', 'BoxTextured.gltf'),
})

/** A folder's files as a zip, as a user uploads a .gltf with what it references. */
async function zipOf(folder: string): Promise<Uint8Array> {
  const files: Record<string, Uint8Array> = {}
  for (const name of readdirSync(folder)) files[name] = new Uint8Array(await readFile(join(folder, name)))
  return zipSync(files)
}

/**
 * Every triangle corner the scene draws, as its world position and first UV rounded to 1e-4,
 * sorted: what a renderer draws, whatever the indexing, node layout or vertex order.
 */
function worldCorners(doc: Document): string[] {
  const corners: string[] = []
  for (const node of doc.getRoot().listNodes()) {
    const mesh = node.getMesh()
    if (!mesh) continue
    const m = node.getWorldMatrix()
    for (const prim of mesh.listPrimitives()) {
      expect(prim.getMode()).toBe(Primitive.Mode.TRIANGLES)
      const position = prim.getAttribute('POSITION')!
      const uv = prim.getAttribute('TEXCOORD_0')
      const indices = prim.getIndices()
      const count = indices ? indices.getCount() : position.getCount()
      for (let i = 0; i < count; i++) {
        const v = indices ? indices.getScalar(i) : i
        const [x, y, z] = position.getElement(v, [0, 0, 0])
        const world = [0, 1, 2].map((r) => m[r]! * x! + m[4 + r]! * y! + m[8 + r]! * z! + m[12 + r]!)
        const key = [...world, ...(uv ? uv.getElement(v, [0, 0]) : [])].map((n) => (Math.round(n * 1e4) / 1e4 + 0).toFixed(4))
        corners.push(key.join(' '))
      }
    }
  }
  return corners.sort()
}

/** The pixels of an image, to compare images whose bytes were re-coded. */
async function pixels(image: Uint8Array): Promise<Buffer> {
  return sharp(image).ensureAlpha().raw().toBuffer()
}

/** A 4×2 orange PNG, an image the 1.0 files hold none of. */
async function glowPng(): Promise<Buffer> {
  return sharp({ create: { width: 4, height: 2, channels: 3, background: { r: 255, g: 96, b: 0 } } })
    .png()
    .toBuffer()
}

/** a · b, column-major 4×4 matrices (a point is x, y, z, 1: apply with {@link transformPoint}). */
function multiply(a: ArrayLike<number>, b: ArrayLike<number>): number[] {
  return Array.from({ length: 16 }, (_, i) => [0, 1, 2, 3].reduce((sum, k) => sum + a[k * 4 + (i % 4)]! * b[Math.floor(i / 4) * 4 + k]!, 0))
}

function transformPoint(m: ArrayLike<number>, [x, y, z]: number[]): number[] {
  return [0, 1, 2].map((r) => m[r]! * x! + m[4 + r]! * y! + m[8 + r]! * z! + m[12 + r]!)
}

/** The quaternion of a turn of `angle` radians about Z. */
const aboutZ = (angle: number): vec4 => [0, 0, Math.sin(angle / 2), Math.cos(angle / 2)]

/**
 * The embedded box of the assimp corpus skinned as collada2gltf wrote skins: a skeleton root and two
 * joints found by `jointName`, JOINT and WEIGHT as float VEC4 (the lower half of the box 3/4 on the
 * lower joint, the upper half 3/4 on the upper one), a bind shape matrix that doubles and moves the
 * box, inverse bind matrices of the joints' bind pose, and an animation turning the upper joint
 * (0, a quarter turn at 1 s, 0 at 2 s); the new data in a second, embedded buffer.
 */
function skinnedBox(json: Gltf1Test): Gltf1Test {
  const out = structuredClone(json)
  const meshNode = 'Geometry-mesh002Node'
  const primitive = (out.meshes['Geometry-mesh002'] as { primitives: { attributes: Record<string, string> }[] }).primitives[0]!
  const positions = gltf1Floats(out, primitive.attributes.POSITION!)
  const count = positions.length / 3
  const upper = Array.from({ length: count }, (_, v) => (positions[v * 3 + 1]! > 0 ? 0.75 : 0.25))
  const data = [
    ...Array.from({ length: count }, () => [0, 1, 0, 0]).flat(),
    ...upper.flatMap((u) => [1 - u, u, 0, 0]),
    ...[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0.5, 0, 1],
    ...[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1],
    ...[0, 1, 2],
    ...[...aboutZ(0), ...aboutZ(Math.PI / 2), ...aboutZ(0)],
  ]
  const bytes = Buffer.from(new Float32Array(data).buffer)
  out.buffers.skinData = { byteLength: bytes.byteLength, uri: `data:application/octet-stream;base64,${bytes.toString('base64')}` }
  const view = (name: string, offset: number, length: number) => {
    out.bufferViews[name] = { buffer: 'skinData', byteOffset: offset * 4, byteLength: length * 4 }
  }
  view('jointView', 0, count * 8)
  view('bindView', count * 8, 32)
  view('keyView', count * 8 + 32, 15)
  const accessor = (bufferView: string, byteOffset: number, n: number, type: string) => ({
    bufferView,
    byteOffset,
    componentType: 5126,
    count: n,
    type,
  })
  Object.assign(out.accessors, {
    jointAccessor: accessor('jointView', 0, count, 'VEC4'),
    weightAccessor: accessor('jointView', count * 16, count, 'VEC4'),
    bindAccessor: accessor('bindView', 0, 2, 'MAT4'),
    timeAccessor: accessor('keyView', 0, 3, 'SCALAR'),
    turnAccessor: accessor('keyView', 12, 3, 'VEC4'),
  })
  Object.assign(primitive.attributes, { JOINT: 'jointAccessor', WEIGHT: 'weightAccessor' })
  out.skins = {
    boxSkin: {
      name: 'BoxSkin',
      bindShapeMatrix: [2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0, 0.25, 0, 0, 1],
      inverseBindMatrices: 'bindAccessor',
      jointNames: ['Lower', 'Upper'],
    },
  }
  Object.assign(out.nodes[meshNode]!, { skin: 'boxSkin', skeletons: ['skeletonRoot'] })
  Object.assign(out.nodes, {
    skeletonRoot: { name: 'Skeleton', translation: [0, -0.5, 0], children: ['lowerJoint'] },
    lowerJoint: { name: 'LowerBone', jointName: 'Lower', children: ['upperJoint'] },
    upperJoint: { name: 'UpperBone', jointName: 'Upper', translation: [0, 0.5, 0], rotation: [0, 0, 0, 1], children: [] },
  })
  out.scenes[out.scene as string]!.nodes.push('skeletonRoot')
  out.animations = {
    turn: {
      parameters: { TIME: 'timeAccessor', rotation: 'turnAccessor' },
      samplers: { s: { input: 'TIME', output: 'rotation', interpolation: 'LINEAR' } },
      channels: [{ sampler: 's', target: { id: 'upperJoint', path: 'rotation' } }],
    },
  }
  return out
}

/** The parts of a glTF 1.0 JSON the skin tests read and change. */
interface Gltf1Test {
  nodes: Record<
    string,
    { matrix?: number[]; translation?: vec3; rotation?: vec4; scale?: vec3; children?: string[]; [key: string]: unknown }
  >
  scenes: Record<string, { nodes: string[] }>
  scene?: string
  meshes: Record<string, unknown>
  accessors: Record<string, { bufferView: string; byteOffset: number; count: number; type: string; componentType: number }>
  bufferViews: Record<string, { buffer: string; byteOffset: number; byteLength: number }>
  buffers: Record<string, { uri: string; byteLength: number }>
  skins?: Record<string, { bindShapeMatrix: number[]; inverseBindMatrices: string; jointNames: string[]; name?: string }>
  animations?: Record<string, unknown>
}

/** A float accessor of a 1.0 file whose buffers are data URIs, packed. */
function gltf1Floats(json: Gltf1Test, id: string): number[] {
  const accessor = json.accessors[id]!
  const view = json.bufferViews[accessor.bufferView]!
  const bytes = Buffer.from(json.buffers[view.buffer]!.uri.split(',')[1]!, 'base64')
  const components = { SCALAR: 1, VEC2: 2, VEC3: 3, VEC4: 4, MAT4: 16 }[accessor.type]!
  const start = view.byteOffset + accessor.byteOffset
  return Array.from({ length: accessor.count * components }, (_, i) => bytes.readFloatLE(start + i * 4))
}

/**
 * Where the skinned box's vertices are drawn with the upper joint turned to `rotation`, computed from
 * the 1.0 file as a 1.0 viewer skins (joint · inverse bind · bind shape · position, weighted), sorted.
 */
function posedGltf1(json: Gltf1Test, rotation: vec4): string[] {
  const posed = structuredClone(json)
  posed.nodes.upperJoint!.rotation = rotation
  const world = gltf1WorldMatrices(posed)
  const skin = json.skins!.boxSkin!
  const inverse = gltf1Floats(json, skin.inverseBindMatrices)
  const ids = ['lowerJoint', 'upperJoint']
  const primitive = (json.meshes['Geometry-mesh002'] as { primitives: { attributes: Record<string, string> }[] }).primitives[0]!
  const positions = gltf1Floats(json, primitive.attributes.POSITION!)
  const joints = gltf1Floats(json, primitive.attributes.JOINT!)
  const weights = gltf1Floats(json, primitive.attributes.WEIGHT!)
  const out: string[] = []
  for (let v = 0; v < positions.length / 3; v++) {
    const sum = [0, 0, 0]
    for (let k = 0; k < 4; k++) {
      const joint = ids[joints[v * 4 + k]!]!
      const m = multiply(
        multiply(world.get(joint)!, inverse.slice(joints[v * 4 + k]! * 16, joints[v * 4 + k]! * 16 + 16)),
        skin.bindShapeMatrix,
      )
      transformPoint(m, positions.slice(v * 3, v * 3 + 3)).forEach((c, i) => {
        sum[i]! += weights[v * 4 + k]! * c
      })
    }
    out.push(sum.map((c) => (Math.round(c * 1e4) / 1e4 + 0).toFixed(4)).join(' '))
  }
  return out.sort()
}

/**
 * Where a 2.0 document's skinned vertices are drawn with its one animation at key `key` (each
 * channel's node set to that key's value), as a 2.0 viewer skins (joint · inverse bind · position), sorted.
 */
function posedGltf2(doc: Document, key: number): string[] {
  for (const channel of doc.getRoot().listAnimations()[0]!.listChannels()) {
    const output = channel.getSampler()!.getOutput()!
    const node = channel.getTargetNode()!
    if (channel.getTargetPath() === 'rotation') node.setRotation(output.getElement(key, [0, 0, 0, 0]) as vec4)
    else if (channel.getTargetPath() === 'translation') node.setTranslation(output.getElement(key, [0, 0, 0]) as vec3)
  }
  const out: string[] = []
  for (const node of doc.getRoot().listNodes()) {
    const skin = node.getSkin()
    if (!skin) continue
    const inverse = skin.getInverseBindMatrices()!
    const matrices = skin.listJoints().map((joint, j) => multiply(joint.getWorldMatrix(), inverse.getElement(j, new Array(16).fill(0))))
    for (const primitive of node.getMesh()!.listPrimitives()) {
      const position = primitive.getAttribute('POSITION')!
      const joints = primitive.getAttribute('JOINTS_0')!
      const weights = primitive.getAttribute('WEIGHTS_0')!
      for (let v = 0; v < position.getCount(); v++) {
        const p = position.getElement(v, [0, 0, 0])
        const j = joints.getElement(v, [0, 0, 0, 0])
        const w = weights.getElement(v, [0, 0, 0, 0])
        const sum = [0, 1, 2].map((i) => [0, 1, 2, 3].reduce((s, k) => s + w[k]! * transformPoint(matrices[j[k]!]!, p)[i]!, 0))
        out.push(sum.map((c) => (Math.round(c * 1e4) / 1e4 + 0).toFixed(4)).join(' '))
      }
    }
  }
  return out.sort()
}

/**
 * A binary glTF 1.0 (KHR_binary_glTF) of a .gltf, its one buffer and one PNG, as collada2gltf and
 * Cesium wrote them: a 20-byte header, the JSON padded to 4 bytes, then the body (the buffer, then
 * the image); the image names its buffer view through the extension.
 */
function binaryGltf1(json: Record<string, Record<string, Record<string, unknown>>>, bin: Uint8Array, png: Uint8Array): Uint8Array {
  const imageOffset = Math.ceil(bin.byteLength / 4) * 4
  const body = new Uint8Array(imageOffset + png.byteLength)
  body.set(bin)
  body.set(png, imageOffset)
  const out = structuredClone(json) as typeof json & { extensionsUsed?: string[] }
  out.buffers = { binary_glTF: { byteLength: body.byteLength, type: 'arraybuffer', uri: 'data:,' } }
  for (const view of Object.values(out.bufferViews!)) view.buffer = 'binary_glTF'
  out.bufferViews!.image_view = { buffer: 'binary_glTF', byteOffset: imageOffset, byteLength: png.byteLength }
  for (const image of Object.values(out.images!)) {
    image.uri = 'data:,'
    image.extensions = { KHR_binary_glTF: { bufferView: 'image_view', mimeType: 'image/png', width: 256, height: 256 } }
  }
  out.extensionsUsed = ['KHR_binary_glTF']
  let content = new TextEncoder().encode(JSON.stringify(out))
  const padded = new Uint8Array(Math.ceil(content.byteLength / 4) * 4).fill(0x20)
  padded.set(content)
  content = padded
  const file = new Uint8Array(20 + content.byteLength + body.byteLength)
  const header = new DataView(file.buffer)
  header.setUint32(0, 0x46546c67, true)
  header.setUint32(4, 1, true)
  header.setUint32(8, file.byteLength, true)
  header.setUint32(12, content.byteLength, true)
  header.setUint32(16, 0, true)
  file.set(content, 20)
  file.set(body, 20 + content.byteLength)
  return file
}

/** Triangles a glTF 1.0 file's scene draws, counted from its JSON (indexed triangle primitives, as collada2gltf wrote them). */
function gltf1Triangles(json: {
  meshes: Record<string, { primitives: { indices: string; mode?: number }[] }>
  accessors: Record<string, { count: number }>
  nodes: Record<string, { meshes?: string[] }>
}): number {
  let triangles = 0
  for (const node of Object.values(json.nodes)) {
    for (const mesh of node.meshes ?? []) {
      for (const prim of json.meshes[mesh]!.primitives) {
        expect(prim.mode ?? 4).toBe(4)
        triangles += json.accessors[prim.indices]!.count / 3
      }
    }
  }
  return triangles
}

/** Each 1.0 node's world matrix by id, composed as glTF says: a matrix, or T·R·S, under its parents' (scene roots first). */
function gltf1WorldMatrices(json: Pick<Gltf1Test, 'nodes' | 'scenes'>): Map<string, number[]> {
  const world = new Map<string, number[]>()
  const visit = (id: string, parent: number[]) => {
    const node = json.nodes[id]!
    const local = node.matrix ?? [
      ...MathUtils.compose(
        node.translation ?? [0, 0, 0],
        node.rotation ?? [0, 0, 0, 1],
        node.scale ?? [1, 1, 1],
        new Array(16).fill(0) as mat4,
      ),
    ]
    world.set(id, multiply(parent, local))
    for (const child of node.children ?? []) visit(child, world.get(id)!)
  }
  const identity = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]
  for (const scene of Object.values(json.scenes)) for (const id of scene.nodes) visit(id, identity)
  return world
}

describe.skipIf(!available)('glTF 1.0 input, read through assimp', async () => {
  const pool = createEnginePool({ threads: 1 })
  const platform: Platform = await loadPlatform()
  afterAll(() => pool.destroy())
  const run = async (name: JobName, bytes: Uint8Array, format: string, options: Record<string, unknown> = {}) =>
    pool.run({ name, input: { bytes: bytes.slice() }, format, options })
  const convert = async (bytes: Uint8Array, format: string) => {
    const result = success(await run('convert', bytes, format, { target_format: 'glb' }))
    expect((await validateGlb(result.bytes!)).errors).toEqual([])
    return { doc: await platform.io.readBinary(result.bytes!), warnings: (result.details?.warnings ?? []) as string[] }
  }

  it('draws what the glTF 2.0 sample of the same model draws: BoxTextured, every corner at the same place with the same UV, the texture the same pixels', async () => {
    const { doc, warnings } = await convert(await zipOf(paths.box), 'zip')
    const sample = await platform.io.read(paths.box2)
    expect(worldCorners(doc)).toHaveLength(36)
    expect(worldCorners(doc)).toEqual(worldCorners(sample))
    const [texture] = doc.getRoot().listTextures()
    expect(await pixels(texture!.getImage()!)).toEqual(await pixels(new Uint8Array(await readFile(join(paths.box, 'CesiumLogoFlat.png')))))
    expect(doc.getRoot().listMaterials()[0]!.getBaseColorTexture()).toBe(texture)
    expect(warnings).toContainEqual(expect.stringContaining('1 technique (GLSL shaders) not carried'))
  })

  it('reads data URIs (the embedded form alone) and KHR_materials_common (no technique to lose) as the same box', async () => {
    const reference = worldCorners((await convert(await zipOf(paths.box), 'zip')).doc)
    const embedded = await convert(new Uint8Array(await readFile(paths.embedded)), 'gltf')
    expect(worldCorners(embedded.doc)).toEqual(reference)
    expect(embedded.doc.getRoot().listTextures()).toHaveLength(1)
    const common = await convert(await zipOf(paths.common), 'zip')
    expect(worldCorners(common.doc)).toEqual(reference)
    expect(common.doc.getRoot().listMaterials()[0]!.getBaseColorTexture()).not.toBeNull()
    expect(common.warnings.filter((w) => w.includes('technique'))).toEqual([])
  })

  it('reads binary glTF 1.0 (KHR_binary_glTF) as its JSON form, and refuses the corpus one whose header declares more bytes than it holds', async () => {
    const json = JSON.parse(await readFile(join(paths.box, 'BoxTextured.gltf'), 'utf8'))
    const png = new Uint8Array(await readFile(join(paths.box, 'CesiumLogoFlat.png')))
    const glb = binaryGltf1(json, new Uint8Array(await readFile(join(paths.box, 'BoxTextured.bin'))), png)
    const { doc } = await convert(glb, 'glb')
    expect(worldCorners(doc)).toEqual(worldCorners((await convert(await zipOf(paths.box), 'zip')).doc))
    expect(await pixels(doc.getRoot().listTextures()[0]!.getImage()!)).toEqual(await pixels(png))
    const truncated = await run('convert', new Uint8Array(await readFile(paths.truncatedBinary)), 'glb', { target_format: 'glb' })
    expect(truncated).toMatchObject({ ok: false, message: 'truncated binary glTF 1.0: header declares 17754 bytes, file has 17721' })
  })

  it("puts CesiumMilkTruck's wheels where the file's transforms put them and keeps their two animations, key for key; compressed, every triangle stays", async () => {
    const json = JSON.parse(await readFile(join(paths.truck, 'CesiumMilkTruck.gltf'), 'utf8'))
    const { doc, warnings } = await convert(await zipOf(paths.truck), 'zip')
    expect(countSceneTriangles(doc)).toBe(gltf1Triangles(json))
    // Every node with a mesh, by its name, at the world transform the 1.0 JSON gives (T·R·S down the tree).
    const expected = gltf1WorldMatrices(json)
    const drawn = Object.entries(json.nodes as Record<string, { name: string; meshes?: string[] }>).filter(([, node]) => node.meshes)
    expect(drawn.length).toBe(3)
    for (const [id, node] of drawn) {
      const [found, ...others] = doc
        .getRoot()
        .listNodes()
        .filter((n) => n.getName() === node.name)
      expect(others).toEqual([])
      expect([...found!.getWorldMatrix()].map((v) => v.toFixed(5))).toEqual(expected.get(id)!.map((v) => v.toFixed(5)))
    }
    const bin = await readFile(join(paths.truck, 'CesiumMilkTruck.bin'))
    const keys = (accessor: string, components: number) => {
      const a = json.accessors[accessor]
      const offset = json.bufferViews[a.bufferView].byteOffset + a.byteOffset
      return [...new Float32Array(bin.buffer.slice(bin.byteOffset + offset, bin.byteOffset + offset + a.count * components * 4))]
    }
    const animations = doc.getRoot().listAnimations()
    expect(animations.map((a) => a.getName()).sort()).toEqual(Object.keys(json.animations).sort())
    for (const animation of animations) {
      const source = json.animations[animation.getName()]
      const [channel] = animation.listChannels()
      expect(channel!.getTargetNode()!.getName()).toBe(json.nodes[source.channels[0].target.id].name)
      expect(channel!.getTargetPath()).toBe('rotation')
      expect([...channel!.getSampler()!.getInput()!.getArray()!]).toEqual(keys(source.parameters.TIME, 1))
      expect([...channel!.getSampler()!.getOutput()!.getArray()!]).toEqual(keys(source.parameters.rotation, 4))
    }
    expect(warnings.filter((w) => w.includes('animation'))).toEqual([])
    const result = success(await run('compress', await zipOf(paths.truck), 'zip', { engine: 'meshopt' }))
    expect((await validateGlb(result.bytes!)).errors).toEqual([])
    const compressed = await platform.io.readBinary(result.bytes!)
    expect(countSceneTriangles(compressed)).toBe(gltf1Triangles(json))
    expect(compressed.getRoot().listAnimations()).toHaveLength(2)
    const [before, after] = [doc, compressed].map((d) => getBounds(d.getRoot().listScenes()[0]!))
    const extent = Math.max(...before!.max.map((v, i) => v - before!.min[i]!))
    for (let i = 0; i < 3; i++) expect(Math.abs(after!.max[i]! - before!.max[i]!)).toBeLessThan(extent * 0.001)
  })

  it('keeps perspective and orthographic cameras on their nodes (assimp drops the one and fails the whole file on the other)', async () => {
    const json = JSON.parse(await readFile(paths.embedded, 'utf8'))
    json.cameras = {
      wide: { type: 'perspective', perspective: { aspectRatio: 1.5, yfov: 0.66, zfar: 100, znear: 0.01 } },
      plan: { type: 'orthographic', orthographic: { xmag: 2, ymag: 1, zfar: 50, znear: 0.1 } },
    }
    json.nodes.wideNode = { name: 'Wide', camera: 'wide', translation: [0, 1, 5], children: [] }
    json.nodes.planNode = { name: 'Plan', camera: 'plan', matrix: [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 3, 0, 0, 1], children: [] }
    json.scenes[json.scene].nodes.push('wideNode', 'planNode')
    const { doc, warnings } = await convert(new TextEncoder().encode(JSON.stringify(json)), 'gltf')
    const byName = (name: string) =>
      doc
        .getRoot()
        .listNodes()
        .find((node) => node.getName() === name)!
    const wide = byName('Wide').getCamera()!
    expect([wide.getType(), wide.getYFov(), wide.getAspectRatio(), wide.getZNear(), wide.getZFar()]).toEqual([
      'perspective',
      0.66,
      1.5,
      0.01,
      100,
    ])
    expect(byName('Wide').getTranslation()).toEqual([0, 1, 5])
    const plan = byName('Plan').getCamera()!
    expect([plan.getType(), plan.getXMag(), plan.getYMag(), plan.getZNear(), plan.getZFar()]).toEqual(['orthographic', 2, 1, 0.1, 50])
    expect(byName('Plan').getTranslation()).toEqual([3, 0, 0])
    expect(warnings.filter((w) => w.includes('camera'))).toEqual([])
    expect(worldCorners(doc)).toHaveLength(36)
  })

  it("keeps KHR_materials_common's directional, point and spot lights on their nodes as KHR_lights_punctual, and names what glTF 2.0 cannot hold", async () => {
    const json = JSON.parse(await readFile(paths.embedded, 'utf8'))
    json.extensionsUsed = ['KHR_materials_common']
    json.extensions = {
      KHR_materials_common: {
        lights: {
          sun: { type: 'directional', name: 'Sun', directional: { color: [1, 0.9, 0.8] } },
          bulb: { type: 'point', name: 'Bulb', point: { color: [0.5, 0.5, 1], constantAttenuation: 1, quadraticAttenuation: 0.1 } },
          cone: { type: 'spot', name: 'Cone', spot: { color: [1, 1, 1], fallOffAngle: 0.5 } },
          sky: { type: 'ambient', ambient: { color: [0.2, 0.2, 0.2] } },
        },
      },
    }
    const placed = (light: string, transform: Record<string, number[]>) => ({
      ...transform,
      children: [],
      extensions: { KHR_materials_common: { light } },
    })
    json.nodes.sunNode = { name: 'SunNode', ...placed('sun', { rotation: [-0.382683, 0, 0, 0.92388] }) }
    json.nodes.bulbNode = { name: 'BulbNode', ...placed('bulb', { translation: [0, 2, 0] }) }
    json.nodes.coneNode = { name: 'ConeNode', ...placed('cone', { translation: [0, 0, 3] }) }
    json.nodes.skyNode = { name: 'SkyNode', ...placed('sky', {}) }
    json.scenes[json.scene].nodes.push('sunNode', 'bulbNode', 'coneNode', 'skyNode')
    const { doc, warnings } = await convert(new TextEncoder().encode(JSON.stringify(json)), 'gltf')
    const lightOn = (name: string) => {
      const node = doc
        .getRoot()
        .listNodes()
        .find((n) => n.getName() === name)!
      const light = node.getExtension<Light>('KHR_lights_punctual')
      return light && { name: light.getName(), type: light.getType(), color: light.getColor(), intensity: light.getIntensity() }
    }
    expect(lightOn('SunNode')).toEqual({ name: 'Sun', type: 'directional', color: [1, 0.9, 0.8], intensity: 1 })
    expect(lightOn('BulbNode')).toEqual({ name: 'Bulb', type: 'point', color: [0.5, 0.5, 1], intensity: 1 })
    expect(lightOn('ConeNode')).toMatchObject({ name: 'Cone', type: 'spot' })
    const cone = doc
      .getRoot()
      .listNodes()
      .find((n) => n.getName() === 'ConeNode')!
      .getExtension<Light>('KHR_lights_punctual')!
    expect([cone.getInnerConeAngle(), cone.getOuterConeAngle()]).toEqual([0, 0.25])
    expect(lightOn('SkyNode')).toBeNull()
    expect(warnings).toEqual(
      expect.arrayContaining([
        '[gltf 1.0] 1 ambient light(s) not carried: glTF 2.0 has no ambient light',
        '[gltf 1.0] the attenuation factors or spot exponent of 1 light(s) not carried (Bulb): KHR_lights_punctual lights fall off by the inverse square of the distance',
      ]),
    )
    expect(worldCorners(doc)).toHaveLength(36)
  })

  it("keeps a light on a node assimp renamed (id ROOT, beside assimp's own ROOT), names one on a node of a scene assimp does not read, and reads a file assimp fails on (no scene, a mesh named twice)", async () => {
    const json = JSON.parse(await readFile(paths.embedded, 'utf8'))
    json.extensions = { KHR_materials_common: { lights: { sun: { type: 'directional', name: 'Sun', directional: { color: [1, 1, 1] } } } } }
    const lamp = (name: string) => ({ name, children: [], translation: [0, 2, 0], extensions: { KHR_materials_common: { light: 'sun' } } })
    json.nodes.ROOT = lamp('Lamp')
    json.nodes.elsewhere = lamp('Elsewhere')
    json.scenes[json.scene].nodes.push('ROOT')
    json.scenes.second = { nodes: ['elsewhere'] }
    // Without `scene` (1.0 leaves it optional) the first scene is read, where assimp read out of bounds and aborted.
    delete json.scene
    // A node naming its mesh twice, where assimp dropped every mesh of the file.
    json.nodes['Geometry-mesh002Node'].meshes.push('Geometry-mesh002')
    const { doc, warnings } = await convert(new TextEncoder().encode(JSON.stringify(json)), 'gltf')
    const lampNode = doc
      .getRoot()
      .listNodes()
      .find((node) => node.getName() === 'Lamp')
    expect(lampNode?.getExtension<Light>('KHR_lights_punctual')?.getName()).toBe('Sun')
    expect(lampNode?.getTranslation()).toEqual([0, 2, 0])
    expect(worldCorners(doc)).toHaveLength(36)
    expect(warnings).toEqual(
      expect.arrayContaining([
        '[gltf 1.0] 1 light(s) not carried ("sun" on node "elsewhere"): the node is not in the file\'s default scene, the one scene assimp\'s glTF 1.0 importer reads',
        '[gltf 1.0] 1 scene besides the default one not carried ("second"): assimp\'s glTF 1.0 importer, which Mos reads glTF 1.0 through, reads the default scene only',
      ]),
    )
  })

  it('keeps a skin as a glTF 2.0 skin: its joints, the bind shape matrix folded into the inverse bind matrices, weights that sum to 1, each vertex posed where the 1.0 file poses it at rest and mid-animation', async () => {
    const json = skinnedBox(JSON.parse(await readFile(paths.embedded, 'utf8')))
    const { doc, warnings } = await convert(new TextEncoder().encode(JSON.stringify(json)), 'gltf')
    const [skin, ...others] = doc.getRoot().listSkins()
    expect(others).toEqual([])
    expect(skin!.getName()).toBe('BoxSkin')
    expect(skin!.listJoints().map((joint) => joint.getName())).toEqual(['LowerBone', 'UpperBone'])
    expect(skin!.getSkeleton()?.getName()).toBe('Skeleton')
    const skinned = doc
      .getRoot()
      .listNodes()
      .filter((node) => node.getSkin())
    expect(skinned.map((node) => node.getName())).toEqual(['Mesh'])
    const primitive = skinned[0]!.getMesh()!.listPrimitives()[0]!
    expect(primitive.getMaterial()?.getBaseColorTexture()).not.toBeNull()
    const weights = primitive.getAttribute('WEIGHTS_0')!
    for (let v = 0; v < weights.getCount(); v++) {
      expect(weights.getElement(v, [0, 0, 0, 0]).reduce((sum, w) => sum + w, 0)).toBeCloseTo(1, 6)
    }
    // At rest the joints are at their bind pose: every vertex where the bind shape matrix puts it.
    expect(posedGltf2(doc, 0)).toEqual(posedGltf1(json, aboutZ(0)))
    expect(posedGltf2(doc, 1)).toEqual(posedGltf1(json, aboutZ(Math.PI / 2)))
    expect(posedGltf2(doc, 1)).not.toEqual(posedGltf2(doc, 0))
    expect(warnings.filter((w) => w.includes('skin'))).toEqual([])
    const compressed = success(await run('compress', new TextEncoder().encode(JSON.stringify(json)), 'gltf', { engine: 'meshopt' }))
    expect((await validateGlb(compressed.bytes!)).errors).toEqual([])
    expect((await platform.io.readBinary(compressed.bytes!)).getRoot().listSkins()[0]!.listJoints()).toHaveLength(2)
  })

  it('names a skin it cannot keep, and why, drawing its mesh unskinned', async () => {
    const json = skinnedBox(JSON.parse(await readFile(paths.embedded, 'utf8')))
    json.skins!.boxSkin!.jointNames = ['Lower', 'Elbow']
    json.skins!.spare = { ...json.skins!.boxSkin!, jointNames: ['Lower'] }
    const { doc, warnings } = await convert(new TextEncoder().encode(JSON.stringify(json)), 'gltf')
    expect(doc.getRoot().listSkins()).toEqual([])
    expect(worldCorners(doc)).toHaveLength(36)
    expect(warnings).toEqual(
      expect.arrayContaining([
        '[gltf 1.0] skin "boxSkin" of node "Geometry-mesh002Node" not carried (its mesh is drawn unskinned): joint "Elbow" is no node of its skeletons',
        '[gltf 1.0] 1 skin(s) no node uses not carried ("spare")',
      ]),
    )
    // Joints found, but a mesh with no joints or weights to skin: no skin is left behind either.
    const unweighted = skinnedBox(JSON.parse(await readFile(paths.embedded, 'utf8')))
    const { attributes } = (unweighted.meshes['Geometry-mesh002'] as { primitives: { attributes: Record<string, string> }[] })
      .primitives[0]!
    delete attributes.JOINT
    delete attributes.WEIGHT
    const plain = await convert(new TextEncoder().encode(JSON.stringify(unweighted)), 'gltf')
    expect(plain.doc.getRoot().listSkins()).toEqual([])
    expect(plain.warnings).toContain(
      '[gltf 1.0] skin "boxSkin" of node "Geometry-mesh002Node" not carried (its mesh is drawn unskinned): a primitive of mesh "Geometry-mesh002" has no JOINT and WEIGHT attributes',
    )
  })

  it("keeps a material's states assimp leaves out: both sides drawn, blending with its transparency, its emission (technique and KHR_materials_common alike)", async () => {
    const embedded = JSON.parse(await readFile(paths.embedded, 'utf8'))
    const plain = (await convert(new TextEncoder().encode(JSON.stringify(embedded)), 'gltf')).doc.getRoot().listMaterials()[0]!
    // collada2gltf's technique culls back faces and does not blend: single-sided and opaque, as it came.
    expect([plain.getDoubleSided(), plain.getAlphaMode(), plain.getEmissiveFactor()]).toEqual([false, 'OPAQUE', [0, 0, 0]])
    const [, material] = Object.entries(embedded.materials as Record<string, { technique: string; values: Record<string, unknown> }>)[0]!
    embedded.techniques[material.technique].states = { enable: [2929, 3042] }
    material.values.transparency = 0.5
    material.values.emission = [0.2, 0.1, 0, 1]
    const glass = (await convert(new TextEncoder().encode(JSON.stringify(embedded)), 'gltf')).doc.getRoot().listMaterials()[0]!
    expect([glass.getDoubleSided(), glass.getAlphaMode(), glass.getBaseColorFactor()[3]]).toEqual([true, 'BLEND', 0.5])
    expect(glass.getEmissiveFactor().map((v) => v.toFixed(5))).toEqual(['0.20000', '0.10000', '0.00000'])
    expect(glass.getBaseColorTexture()).not.toBeNull()
    const common = JSON.parse(await readFile(join(paths.common, 'BoxTextured.gltf'), 'utf8'))
    const extension = (Object.values(common.materials)[0] as { extensions: { KHR_materials_common: Record<string, unknown> } }).extensions
      .KHR_materials_common
    Object.assign(extension, { doubleSided: true, transparent: true })
    Object.assign(extension.values as object, { transparency: 0.25 })
    const files = unzipSync(await zipOf(paths.common))
    files['BoxTextured.gltf'] = new TextEncoder().encode(JSON.stringify(common))
    const commonMaterial = (await convert(zipSync(files), 'zip')).doc.getRoot().listMaterials()[0]!
    expect([commonMaterial.getDoubleSided(), commonMaterial.getAlphaMode(), commonMaterial.getBaseColorFactor()[3]]).toEqual([
      true,
      'BLEND',
      0.25,
    ])
  })

  it("keeps the diffuse texture's sampler and the extras of nodes and materials, and names a texture on a parameter assimp does not read and an extension Mos does not read", async () => {
    const json = JSON.parse(await readFile(paths.embedded, 'utf8'))
    // Clamped one way, mirrored the other, nearest filtering: assimp wrote REPEAT and no filter.
    Object.assign(json.samplers.sampler_0, { wrapS: 33071, wrapT: 33648, magFilter: 9728, minFilter: 9728 })
    json.nodes['Geometry-mesh002Node'].extras = { part: 'lid', id: 7 }
    const material = json.materials['Effect-Texture']
    material.extras = { finish: 'matte' }
    material.values.ambient = 'texture_Image0001'
    const { doc, warnings } = await convert(new TextEncoder().encode(JSON.stringify(json)), 'gltf')
    const [converted] = doc.getRoot().listMaterials()
    const info = converted!.getBaseColorTextureInfo()!
    expect([info.getWrapS(), info.getWrapT(), info.getMagFilter(), info.getMinFilter()]).toEqual([33071, 33648, 9728, 9728])
    expect(converted!.getExtras()).toEqual({ finish: 'matte' })
    expect(
      doc
        .getRoot()
        .listNodes()
        .find((node) => node.getName() === 'Mesh')
        ?.getExtras(),
    ).toEqual({ part: 'lid', id: 7 })
    expect(warnings).toContain(
      '[gltf 1.0] material "Effect-Texture": its ambient texture not carried (glTF 2.0 has no ambient term; an occlusion map is another thing)',
    )
    // An extension Mos does not read (Cesium's RTC centre, used by 3D Tiles' b3dm) is named, not passed over.
    json.extensionsUsed = ['CESIUM_RTC']
    json.extensions = { CESIUM_RTC: { center: [6378137, 0, 0] } }
    const rtc = await convert(new TextEncoder().encode(JSON.stringify(json)), 'gltf')
    expect(rtc.warnings).toContain(
      '[gltf 1.0] extension(s) "CESIUM_RTC" not read: what they add (an RTC centre, quantized vertices, technique data…) is not carried, and the model is read as if they were absent',
    )
    expect(warnings.filter((w) => w.includes('extension'))).toEqual([])
  })

  it('keeps vertex colours (COLOR), which assimp drops, on the same corners, and names a mesh whose colours it cannot make', async () => {
    const json = JSON.parse(await readFile(paths.embedded, 'utf8'))
    const primitive = json.meshes['Geometry-mesh002'].primitives[0]
    const positions = gltf1Floats(json, primitive.attributes.POSITION)
    // Each corner's colour from its position: red rises with x, green with y, blue with z.
    const colors = positions.flatMap((p, i) => (i % 3 === 2 ? [p + 0.5, 1] : [p + 0.5]))
    const bytes = Buffer.from(new Float32Array(colors).buffer)
    json.buffers.colors = { byteLength: bytes.byteLength, uri: `data:application/octet-stream;base64,${bytes.toString('base64')}` }
    json.bufferViews.colorView = { buffer: 'colors', byteOffset: 0, byteLength: bytes.byteLength }
    json.accessors.colorAccessor = {
      bufferView: 'colorView',
      byteOffset: 0,
      componentType: 5126,
      count: positions.length / 3,
      type: 'VEC4',
    }
    primitive.attributes.COLOR = 'colorAccessor'
    const plain = worldCorners((await convert(new Uint8Array(await readFile(paths.embedded)), 'gltf')).doc)
    const { doc, warnings } = await convert(new TextEncoder().encode(JSON.stringify(json)), 'gltf')
    expect(worldCorners(doc)).toEqual(plain)
    const [converted, ...others] = doc
      .getRoot()
      .listMeshes()
      .flatMap((mesh) => mesh.listPrimitives())
    expect(others).toEqual([])
    expect(converted!.getMaterial()?.getBaseColorTexture()).not.toBeNull()
    const position = converted!.getAttribute('POSITION')!
    const color = converted!.getAttribute('COLOR_0')!
    expect(color.getCount()).toBe(position.getCount())
    for (let v = 0; v < position.getCount(); v++) {
      const [x, y, z] = position.getElement(v, [0, 0, 0])
      expect(color.getElement(v, [0, 0, 0, 0])).toEqual([x! + 0.5, y! + 0.5, z! + 0.5, 1])
    }
    expect(warnings.filter((w) => w.includes('vertex colours'))).toEqual([])
    json.accessors.colorAccessor.count = 18
    const short = await convert(new TextEncoder().encode(JSON.stringify(json)), 'gltf')
    expect(short.warnings).toContain(
      '[gltf 1.0] the vertex colours of node "Geometry-mesh002Node" not carried: a primitive of mesh "Geometry-mesh002" has attributes of unequal counts',
    )
    expect(worldCorners(short.doc)).toEqual(plain)
  })

  it('keeps a KHR_materials_common CONSTANT material unlit, in its emission colour, where assimp made it lit and white', async () => {
    const common = JSON.parse(await readFile(join(paths.common, 'BoxTextured.gltf'), 'utf8'))
    const extension = (Object.values(common.materials)[0] as { extensions: { KHR_materials_common: Record<string, unknown> } }).extensions
      .KHR_materials_common
    Object.assign(extension, { technique: 'CONSTANT', values: { emission: [0.2, 0.4, 0.6, 1] } })
    const files = unzipSync(await zipOf(paths.common))
    files['BoxTextured.gltf'] = new TextEncoder().encode(JSON.stringify(common))
    const { doc } = await convert(zipSync(files), 'zip')
    const [material] = doc.getRoot().listMaterials()
    expect(material!.getExtension('KHR_materials_unlit')).not.toBeNull()
    expect(material!.getBaseColorFactor().map((v) => v.toFixed(5))).toEqual(['0.20000', '0.40000', '0.60000', '1.00000'])
    expect([material!.getEmissiveFactor(), material!.getBaseColorTexture()]).toEqual([[0, 0, 0], null])
    expect(worldCorners(doc)).toHaveLength(36)
  })

  it('keeps an emission texture as the emissive texture with its sampler, and names the specular and ambient textures glTF 2.0 cannot hold (technique values)', async () => {
    const json = JSON.parse(await readFile(paths.embedded, 'utf8'))
    const glow = await glowPng()
    json.images.glow = { name: 'Glow', uri: `data:image/png;base64,${glow.toString('base64')}` }
    json.samplers.clamped = { wrapS: 33071, wrapT: 33648, magFilter: 9728, minFilter: 9728 }
    json.textures.glowTexture = { ...json.textures.texture_Image0001, sampler: 'clamped', source: 'glow' }
    Object.assign(json.materials['Effect-Texture'].values, {
      emission: 'glowTexture',
      specular: 'texture_Image0001',
      ambient: 'texture_Image0001',
    })
    const { doc, warnings } = await convert(new TextEncoder().encode(JSON.stringify(json)), 'gltf')
    const [material, ...others] = doc.getRoot().listMaterials()
    expect(others).toEqual([])
    expect(material!.getEmissiveFactor()).toEqual([1, 1, 1])
    expect(await pixels(material!.getEmissiveTexture()!.getImage()!)).toEqual(await pixels(glow))
    const info = material!.getEmissiveTextureInfo()!
    expect([info.getWrapS(), info.getWrapT(), info.getMagFilter(), info.getMinFilter(), info.getTexCoord()]).toEqual([
      33071, 33648, 9728, 9728, 0,
    ])
    expect(await pixels(material!.getBaseColorTexture()!.getImage()!)).toEqual(
      await pixels(new Uint8Array(await readFile(join(paths.box, 'CesiumLogoFlat.png')))),
    )
    expect(warnings.filter((w) => w.includes('texture not carried'))).toEqual([
      '[gltf 1.0] material "Effect-Texture": its specular texture not carried (a Blinn-Phong highlight colour, which KHR_materials_specular\'s reflectance at normal incidence does not reproduce)',
      '[gltf 1.0] material "Effect-Texture": its ambient texture not carried (glTF 2.0 has no ambient term; an occlusion map is another thing)',
    ])
    // A technique whose one texture coordinate attribute is TEXCOORD_1: its shader reads every texture from set 1.
    const primitive = json.meshes['Geometry-mesh002'].primitives[0]
    primitive.attributes.TEXCOORD_1 = primitive.attributes.TEXCOORD_0
    json.techniques.technique0.parameters.texcoord0.semantic = 'TEXCOORD_1'
    const second = await convert(new TextEncoder().encode(JSON.stringify(json)), 'gltf')
    const [onSet1] = second.doc.getRoot().listMaterials()
    expect([onSet1!.getBaseColorTextureInfo()!.getTexCoord(), onSet1!.getEmissiveTextureInfo()!.getTexCoord()]).toEqual([1, 1])
    const [drawn] = second.doc.getRoot().listMeshes()[0]!.listPrimitives()
    expect(drawn!.getAttribute('TEXCOORD_1')).not.toBeNull()
  })

  it("keeps a KHR_materials_common emission texture from the zip's files: emissive on a PHONG material, the unlit colour of a CONSTANT one; names a shininess texture", async () => {
    const common = JSON.parse(await readFile(join(paths.common, 'BoxTextured.gltf'), 'utf8'))
    const extension = (Object.values(common.materials)[0] as { extensions: { KHR_materials_common: Record<string, unknown> } }).extensions
      .KHR_materials_common
    common.images.glow = { name: 'Glow', uri: 'glow.png' }
    common.textures.glowTexture = { ...common.textures.texture_Image0001, source: 'glow' }
    Object.assign(extension.values as object, { emission: 'glowTexture', shininess: 'texture_Image0001' })
    const glow = await glowPng()
    const files = unzipSync(await zipOf(paths.common))
    files['glow.png'] = new Uint8Array(glow)
    files['BoxTextured.gltf'] = new TextEncoder().encode(JSON.stringify(common))
    const phong = await convert(zipSync(files), 'zip')
    const [lit] = phong.doc.getRoot().listMaterials()
    expect(lit!.getEmissiveFactor()).toEqual([1, 1, 1])
    expect(await pixels(lit!.getEmissiveTexture()!.getImage()!)).toEqual(await pixels(glow))
    expect(phong.warnings.filter((w) => w.includes('texture not carried'))).toEqual([
      '[gltf 1.0] material "Effect-Texture": its shininess texture not carried (glTF 2.0 materials have no such input)',
    ])
    Object.assign(extension, { technique: 'CONSTANT', values: { emission: 'glowTexture' } })
    files['BoxTextured.gltf'] = new TextEncoder().encode(JSON.stringify(common))
    const [unlit] = (await convert(zipSync(files), 'zip')).doc.getRoot().listMaterials()
    expect(unlit!.getExtension('KHR_materials_unlit')).not.toBeNull()
    expect([unlit!.getBaseColorFactor(), unlit!.getEmissiveFactor(), unlit!.getEmissiveTexture()]).toEqual([[1, 1, 1, 1], [0, 0, 0], null])
    expect(await pixels(unlit!.getBaseColorTexture()!.getImage()!)).toEqual(await pixels(glow))
  })

  it('converts an emission texture that is a TGA or a GIF to PNG, as the diffuse texture is, with the same pixels', async () => {
    const glowPixels = await sharp(await glowPng())
      .ensureAlpha()
      .raw()
      .toBuffer()
    // An uncompressed 32-bit TGA, rows top-down (descriptor 0x28), pixels as BGRA: the layout DCC tools write.
    const tga = new Uint8Array(18 + glowPixels.byteLength)
    tga.set([0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 2, 0, 32, 0x28])
    for (let i = 0; i < glowPixels.byteLength; i += 4)
      tga.set([glowPixels[i + 2]!, glowPixels[i + 1]!, glowPixels[i]!, glowPixels[i + 3]!], 18 + i)
    const gif = new Uint8Array(
      await sharp(await glowPng())
        .gif()
        .toBuffer(),
    )
    for (const [name, bytes] of [
      ['glow.tga', tga],
      ['glow.gif', gif],
    ] as const) {
      const common = JSON.parse(await readFile(join(paths.common, 'BoxTextured.gltf'), 'utf8'))
      const extension = (Object.values(common.materials)[0] as { extensions: { KHR_materials_common: Record<string, unknown> } }).extensions
        .KHR_materials_common
      common.images.glow = { name: 'Glow', uri: name }
      common.textures.glowTexture = { ...common.textures.texture_Image0001, source: 'glow' }
      Object.assign(extension.values as object, { emission: 'glowTexture' })
      const files = unzipSync(await zipOf(paths.common))
      files[name] = bytes
      files['BoxTextured.gltf'] = new TextEncoder().encode(JSON.stringify(common))
      const result = await convert(zipSync(files), 'zip')
      expect(
        result.warnings.filter((w) => w.includes('texture')),
        name,
      ).toEqual([])
      const emissive = result.doc.getRoot().listMaterials()[0]!.getEmissiveTexture()
      expect(emissive?.getMimeType(), name).toBe('image/png')
      expect(await pixels(emissive!.getImage()!), name).toEqual(glowPixels)
    }
  })

  it("converts data URI images that are a TIFF (diffuse) and an animated GIF (emission) to PNG, the pixels as sharp decodes them, the GIF's first frame noted", async () => {
    const json = JSON.parse(await readFile(paths.embedded, 'utf8'))
    const logo = await sharp(new Uint8Array(await readFile(join(paths.box, 'CesiumLogoFlat.png'))))
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true })
    const tiff = await sharp(logo.data, { raw: logo.info }).tiff({ compression: 'lzw' }).toBuffer()
    const frame = (r: number) =>
      sharp({ create: { width: 4, height: 2, channels: 3, background: { r, g: 96, b: 0 } } })
        .png()
        .toBuffer()
    const gif = await sharp([await frame(255), await frame(0)], { join: { animated: true } })
      .gif()
      .toBuffer()
    json.images.Image0001.uri = `data:image/tiff;base64,${tiff.toString('base64')}`
    json.images.glow = { name: 'Glow', uri: `data:image/gif;base64,${gif.toString('base64')}` }
    json.textures.glowTexture = { ...json.textures.texture_Image0001, source: 'glow' }
    const material = Object.values(json.materials)[0] as { values: Record<string, unknown> }
    material.values.emission = 'glowTexture'
    const { doc, warnings } = await convert(new TextEncoder().encode(JSON.stringify(json)), 'gltf')
    const [converted] = doc.getRoot().listMaterials()
    expect(converted!.getBaseColorTexture()!.getMimeType()).toBe('image/png')
    expect(await pixels(converted!.getBaseColorTexture()!.getImage()!)).toEqual(logo.data)
    expect(converted!.getEmissiveTexture()!.getMimeType()).toBe('image/png')
    expect(await pixels(converted!.getEmissiveTexture()!.getImage()!)).toEqual(
      await sharp(gif, { pages: 1 }).ensureAlpha().raw().toBuffer(),
    )
    expect(warnings.filter((w) => /GIF|TIFF|decode/.test(w))).toEqual([
      `[gltf 1.0] material "${Object.keys(json.materials)[0]}": its emission texture (image "glow") is an animated GIF of 2 frames: its first frame is kept, as a PNG`,
    ])
  })

  it('names an emission texture whose GIF sharp cannot decode as not carried, the material drawn as without it', async () => {
    const json = JSON.parse(await readFile(paths.embedded, 'utf8'))
    const gif = await sharp(await glowPng())
      .gif()
      .toBuffer()
    // The GIF cut after its header: sharp cannot decode it.
    json.images.glow = { name: 'Glow', uri: `data:image/gif;base64,${gif.subarray(0, 40).toString('base64')}` }
    json.textures.glowTexture = { ...json.textures.texture_Image0001, source: 'glow' }
    const [id, material] = Object.entries(json.materials)[0] as [string, { values: Record<string, unknown> }]
    material.values.emission = 'glowTexture'
    const { doc, warnings } = await convert(new TextEncoder().encode(JSON.stringify(json)), 'gltf')
    const [converted] = doc.getRoot().listMaterials()
    expect([converted!.getEmissiveTexture(), converted!.getEmissiveFactor()]).toEqual([null, [0, 0, 0]])
    expect(converted!.getBaseColorTexture()?.getMimeType()).toBe('image/png')
    expect(warnings.filter((w) => w.includes('emission texture'))).toEqual([
      `[gltf 1.0] material "${id}": its emission texture not carried (its image "glow" is not an image glTF 2.0 holds or Mos converts (PNG, JPEG, TGA, BMP, DDS, PSD, GIF, TIFF, AVIF))`,
    ])
  })

  it('diagnoses a glTF 1.0 file as version 1.0, with no glTF 2.0 validator findings about it', async () => {
    const result = success(await run('diagnose', new Uint8Array(await readFile(paths.embedded)), 'gltf'))
    const report = JSON.parse(new TextDecoder().decode(result.bytes!))
    expect(report).toMatchObject({ format: 'gltf', version: '1.0' })
    expect(report.recommendations[0]).toMatch(/^convert to glb or gltf \(glTF 2\.0: /)
    expect(JSON.stringify(report)).not.toContain('gltf_')
    expect(report.meshes.reduce((sum: number, mesh: { triangles: number }) => sum + mesh.triangles, 0)).toBe(12)
  })

  it('refuses what it cannot read, naming the problem: a buffer not uploaded, a buffer view past its buffer, an accessor past its view', async () => {
    const alone = await run('convert', new Uint8Array(await readFile(join(paths.truck, 'CesiumMilkTruck.gltf'))), 'gltf', {
      target_format: 'glb',
    })
    expect(alone).toMatchObject({ ok: false, message: expect.stringContaining('external resource not available: "CesiumMilkTruck.bin"') })
    // IncorrectVertexArrays: views reaching past the 514 bytes of Cube.bin (assimp would read what is not there).
    const incorrect = await run('convert', await zipOf(paths.incorrect), 'zip', { target_format: 'glb' })
    expect(incorrect).toMatchObject({
      ok: false,
      message: expect.stringMatching(
        /^invalid glTF 1\.0: buffer view "bufferView_\d+" ends at byte \d+, past the 514 bytes of its buffer$/,
      ),
    })
    const json = JSON.parse(await readFile(paths.embedded, 'utf8'))
    const accessor = Object.keys(json.accessors)[0]!
    json.accessors[accessor].count = 1e9
    const huge = await run('convert', new TextEncoder().encode(JSON.stringify(json)), 'gltf', { target_format: 'glb' })
    expect(huge).toMatchObject({
      ok: false,
      message: `invalid glTF 1.0: accessor "${accessor}" reads 1000000000 elements, past the ${json.bufferViews[json.accessors[accessor].bufferView].byteLength} bytes of its buffer view`,
    })
    const strided = JSON.parse(await readFile(paths.embedded, 'utf8'))
    strided.accessors[accessor].byteStride = -12
    const negative = await run('convert', new TextEncoder().encode(JSON.stringify(strided)), 'gltf', { target_format: 'glb' })
    expect(negative).toMatchObject({
      ok: false,
      message: `invalid glTF 1.0: accessor "${accessor}" declares a byte offset or stride of -12`,
    })
    // A 2.0 file (arrays) that says it is 1.0 is read as 2.0, and refused as the validator describes it.
    const mislabelled = JSON.parse(new TextDecoder().decode(embeddedGltf(paths.box2)))
    mislabelled.asset.version = '1.0'
    const asTwo = await run('convert', new TextEncoder().encode(JSON.stringify(mislabelled)), 'gltf', { target_format: 'glb' })
    expect(asTwo).toMatchObject({ ok: false, message: 'invalid glTF: Unknown glTF major asset version: 1. (/asset/version)' })
    // The pool still reads glTF 1.0 after the refusals.
    expect(worldCorners((await convert(new Uint8Array(await readFile(paths.embedded)), 'gltf')).doc)).toHaveLength(36)
  })
})
