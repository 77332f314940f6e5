import { readFile } from 'node:fs/promises'
import { type AnimationSampler, Document, getBounds } from '@gltf-transform/core'
import { afterAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { compress, createEnginePool, loadPlatform } from '../src/index.ts'
import { KEYFRAME_TOLERANCE, reduceKeyframes } from '../src/geometry/keyframes.ts'
import { readModel } from '../src/io/index.ts'
import { glbJson } from '../src/io/gltf-limits.ts'
import { glbOf } from './support/compress-file.ts'
import { validateGlb } from './texture-fixtures.ts'
import { success } from './support/job-result.ts'

const { available, paths } = corpusFiles({
  huesitos: assimp('FBX', 'huesitos.fbx'),
  morphCube: assimp('glTF2', 'glTF-Sample-Models', 'AnimatedMorphCube-glTF', 'AnimatedMorphCube.gltf'),
})

/** An animation as the written JSON holds it. */
interface GltfAnimation {
  channels: { sampler: number; target: { path: string } }[]
  samplers: { input: number; output: number }[]
}

type Path = 'translation' | 'rotation' | 'scale'

/** The value a sampler gives at time `t`, as glTF 2.0 Appendix C defines it (written here apart from the module it checks). */
function sampleAt(sampler: AnimationSampler, path: string, t: number): number[] {
  const times = [...sampler.getInput()!.getArray()!]
  const output = sampler.getOutput()!
  // Normalized integers read as the floats they stand for.
  const key = (i: number) => output.getElement(i, [])
  if (t <= times[0]!) return key(0)
  if (t >= times.at(-1)!) return key(times.length - 1)
  const i = times.findIndex((time, k) => time <= t && t < times[k + 1]!)
  if (sampler.getInterpolation() === 'STEP') return key(i)
  const s = (t - times[i]!) / (times[i + 1]! - times[i]!)
  const [a, b] = [key(i), key(i + 1)]
  if (path !== 'rotation') return a.map((v, c) => v + (b[c]! - v) * s)
  const cos = a.reduce((sum, v, c) => sum + v * b[c]!, 0)
  const angle = Math.acos(Math.min(1, cos))
  if (angle < 1e-9) return a
  return a.map((v, c) => (Math.sin((1 - s) * angle) * v + Math.sin(s * angle) * b[c]!) / Math.sin(angle))
}

/** The largest difference, over every time of `before`'s keys, between the two samplers' values. */
function largestDeparture(before: AnimationSampler, after: AnimationSampler, path: string): number {
  let largest = 0
  for (const t of before.getInput()!.getArray()!) {
    const [a, b] = [sampleAt(before, path, t), sampleAt(after, path, t)]
    for (let c = 0; c < a.length; c++) largest = Math.max(largest, Math.abs(a[c]! - b[c]!))
  }
  return largest
}

/** A document with a 2-unit triangle and one animation of `tracks` on its node: 121 keys, 60 a second over 2 s, unless told. */
function animated(
  tracks: { path: Path; value: (t: number) => number[]; interpolation?: 'LINEAR' | 'STEP' | 'CUBICSPLINE'; times?: number[] }[],
) {
  const doc = new Document()
  const buffer = doc.createBuffer()
  const position = doc
    .createAccessor()
    .setType('VEC3')
    .setArray(new Float32Array([0, 0, 0, 2, 0, 0, 0, 2, 0]))
    .setBuffer(buffer)
  const node = doc.createNode('moving').setMesh(doc.createMesh().addPrimitive(doc.createPrimitive().setAttribute('POSITION', position)))
  doc.createScene().addChild(node)
  const animation = doc.createAnimation('moves')
  const samplers = tracks.map(({ path, value, interpolation = 'LINEAR', times = Array.from({ length: 121 }, (_, i) => i / 60) }) => {
    const keys =
      interpolation === 'CUBICSPLINE' ? times.flatMap((t) => [value(t).map(() => 0), value(t), value(t).map(() => 0)]) : times.map(value)
    const input = doc.createAccessor().setType('SCALAR').setArray(new Float32Array(times)).setBuffer(buffer)
    const output = doc
      .createAccessor()
      .setType(path === 'rotation' ? 'VEC4' : 'VEC3')
      .setArray(new Float32Array(keys.flat()))
      .setBuffer(buffer)
    const sampler = doc.createAnimationSampler().setInput(input).setOutput(output).setInterpolation(interpolation)
    animation.addSampler(sampler).addChannel(doc.createAnimationChannel().setTargetNode(node).setTargetPath(path).setSampler(sampler))
    return sampler
  })
  return { doc, node, samplers }
}

/** Copies of a sampler's keys as they are now, to compare with after the reduction. */
function frozen(doc: Document, sampler: AnimationSampler): AnimationSampler {
  return doc
    .createAnimationSampler()
    .setInput(sampler.getInput()!.clone())
    .setOutput(sampler.getOutput()!.clone())
    .setInterpolation(sampler.getInterpolation())
}

const quarterTurnsAboutY = (turns: number) => [0, Math.sin((turns * Math.PI) / 4), 0, Math.cos((turns * Math.PI) / 4)]

describe('reduceKeyframes', () => {
  it('keeps the two ends of a constant, a straight and an evenly turning track; a curve keeps what its shape needs, within the tolerance', () => {
    const { doc, samplers } = animated([
      { path: 'scale', value: () => [1, 1, 1] },
      { path: 'translation', value: (t) => [t, 2 * t, 0] },
      { path: 'rotation', value: (t) => quarterTurnsAboutY(t) },
    ])
    const { doc: curved, samplers: curves } = animated([
      { path: 'translation', value: (t) => [Math.sin(t * 3), 0, 0] },
      { path: 'rotation', value: (t) => quarterTurnsAboutY(Math.sin(t * 2)) },
    ])
    const before = curves.map((sampler) => frozen(curved, sampler))
    expect(reduceKeyframes(doc)).toEqual({ before: 363, after: 6 })
    expect(samplers.map((sampler) => [...sampler.getInput()!.getArray()!])).toEqual(
      [
        [0, 2],
        [0, 2],
        [0, 2],
      ].map((t) => [...new Float32Array(t)]),
    )
    const { after } = reduceKeyframes(curved)
    expect(after).toBeGreaterThan(4)
    expect(after).toBeLessThan(242)
    // The triangle's largest side is 2: translations may move 2/16384, rotations 1/16384.
    expect(largestDeparture(before[0]!, curves[0]!, 'translation')).toBeLessThanOrEqual(2 * KEYFRAME_TOLERANCE)
    expect(largestDeparture(before[1]!, curves[1]!, 'rotation')).toBeLessThanOrEqual(KEYFRAME_TOLERANCE * 1.0001)
  })

  it('keeps each change of a STEP track and both keys of a jump; leaves cubic splines and shortest-path flips alone', () => {
    const { doc, samplers } = animated([
      { path: 'scale', value: (t) => (t < 0.5 ? [1, 1, 1] : t < 1.5 ? [2, 2, 2] : [1, 1, 1]), interpolation: 'STEP' },
      // Two keys at 1 s: the value jumps from 0 to 5 there.
      { path: 'translation', value: (t) => [t, 0, 0], times: [0, 0.5, 1, 1, 1.5, 2] },
      { path: 'translation', value: (t) => [t, 0, 0], interpolation: 'CUBICSPLINE', times: [0, 1, 2] },
      // Half turns: each next key is the other sign's side, which slerp's shortest path would change.
      { path: 'rotation', value: (t) => quarterTurnsAboutY(t * 4), times: [0, 0.5, 1, 1.5, 2] },
    ])
    const jump = samplers[1]!.getOutput()!.getArray()! as Float32Array
    jump.set([5, 0, 0], 9) // the second key at 1 s
    jump.set([5.5, 0, 0, 6, 0, 0], 12)
    const steps = frozen(doc, samplers[0]!)
    reduceKeyframes(doc)
    // The STEP track: its first key, the keys where it changes, its last.
    expect([...samplers[0]!.getInput()!.getArray()!]).toEqual([0, 0.5, 1.5, 2].map(Math.fround))
    expect(largestDeparture(steps, samplers[0]!, 'scale')).toBe(0)
    expect([...samplers[1]!.getInput()!.getArray()!]).toEqual([0, 1, 1, 2])
    expect(samplers[2]!.getInput()!.getCount()).toBe(3)
    expect(samplers[3]!.getInput()!.getCount()).toBe(5)
  })

  it('reads a sampler with no interpolation set as LINEAR, glTF’s default', () => {
    const { doc, samplers } = animated([{ path: 'scale', value: () => [1, 1, 1] }])
    samplers[0]!.setInterpolation(undefined as never)
    expect(reduceKeyframes(doc)).toEqual({ before: 121, after: 2 })
  })

  it('leaves times other samplers share where a copy of its own would cost more than it saves', () => {
    // A wiggle no key of which can go, then a straight stretch of a dozen keys that can.
    const wiggleThenStraight = (t: number) => [t < 1.8 ? 1 + Math.sin(t * 11) / 4 : 2 + (t - 1.8) / 2, 1, 1]
    const build = (shared: boolean) => {
      const built = animated([
        { path: 'translation', value: (t) => [Math.sin(t * 7), Math.cos(t * 5), 0] },
        { path: 'scale', value: wiggleThenStraight },
      ])
      if (shared) built.samplers[1]!.setInput(built.samplers[0]!.getInput())
      return built
    }
    const apart = build(false)
    reduceKeyframes(apart.doc)
    const dropped = 121 - apart.samplers[1]!.getInput()!.getCount()
    expect(dropped).toBeGreaterThan(5)
    // Shared, the same keys would save 3 floats each and cost a times accessor of its own: not worth it.
    const together = build(true)
    const times = together.samplers[0]!.getInput()
    reduceKeyframes(together.doc)
    expect(together.samplers[1]!.getInput()).toBe(times)
    expect(times!.getCount()).toBe(121)
  })
})

describe('compress as a glTF-Transform transform, without notes', () => {
  it('drops the keyframes and unread UVs all the same (the notes are said, not what does the work)', async () => {
    const { doc, samplers } = animated([{ path: 'scale', value: () => [1, 1, 1] }])
    const prim = doc.getRoot().listMeshes()[0]!.listPrimitives()[0]!
    prim.setAttribute(
      'TEXCOORD_0',
      doc.createAccessor().setType('VEC2').setArray(new Float32Array(6)).setBuffer(doc.getRoot().listBuffers()[0]!),
    )
    await doc.transform(compress({ engine: 'draco' }))
    expect(samplers[0]!.getInput()!.getCount()).toBe(2)
    expect(prim.getAttribute('TEXCOORD_0')).toBeNull()
  })
})

describe.skipIf(!available)('compress drops redundant keyframes and stores the rest as the encodings allow', () => {
  const pool = createEnginePool({ threads: 1 })
  afterAll(() => pool.destroy())

  it('huesitos.fbx with Draco: fewer keys, a note with their numbers, and every channel within the tolerance of the input at each input key', async () => {
    const platform = await loadPlatform()
    const bytes = await readFile(paths.huesitos)
    const input = await readModel(platform, new Uint8Array(bytes), 'fbx')
    const result = success(
      await pool.run({ name: 'compress', input: { bytes: new Uint8Array(bytes) }, format: 'fbx', options: { engine: 'draco' } }),
    )
    expect((await validateGlb(result.bytes!)).errors).toEqual([])
    const output = await platform.io.readBinary(result.bytes!)
    const channels = (doc: Document) =>
      new Map(
        doc
          .getRoot()
          .listAnimations()
          .flatMap((animation) => animation.listChannels())
          .map((channel) => [`${channel.getTargetNode()!.getName()} ${channel.getTargetPath()}`, channel.getSampler()!]),
      )
    const [before, after] = [channels(input), channels(output)]
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort())
    const keys = (samplers: Map<string, AnimationSampler>) => [...samplers.values()].reduce((n, s) => n + s.getInput()!.getCount(), 0)
    expect(keys(after)).toBeLessThan(keys(before) * 0.6)
    expect(result.details?.notes).toContain(
      `animation: ${keys(before) - keys(after)} of ${keys(before)} keyframes dropped, each within 1/16384 (of the model's largest side, for a translation) of what the keys kept interpolate to`,
    )
    const scene = input.getRoot().listScenes()[0]!
    const { min, max } = getBounds(scene)
    const extent = Math.max(...max.map((v, i) => v - min[i]!))
    // Draco codes no animation: rotations go as 16-bit normalized integers (half a step: 1/65534 more).
    const json = glbJson(result.bytes!) as { accessors: { componentType: number; normalized?: boolean }[]; animations: GltfAnimation[] }
    const rotations = json.animations.flatMap(({ channels, samplers }) =>
      channels.filter((channel) => channel.target.path === 'rotation').map((channel) => json.accessors[samplers[channel.sampler]!.output]!),
    )
    expect(rotations.length).toBeGreaterThan(0)
    for (const accessor of rotations) expect(accessor).toMatchObject({ componentType: 5122, normalized: true })
    for (const [name, sampler] of before) {
      const path = name.split(' ').at(-1)!
      const bound = KEYFRAME_TOLERANCE * (path === 'translation' ? extent : 1) + (path === 'rotation' ? 0.5 / 32767 : 0)
      expect(largestDeparture(sampler, after.get(name)!, path), name).toBeLessThanOrEqual(bound * 1.001 + 1e-7)
    }
  })

  it('stores AnimatedMorphCube’s morph weights on 8 bits with Draco too, as meshopt does', async () => {
    const platform = await loadPlatform()
    const glb = await glbOf(platform, paths.morphCube)
    const inputBytes = glb.byteLength // the job takes the bytes over
    const result = success(await pool.run({ name: 'compress', input: { bytes: glb }, format: 'glb', options: { engine: 'draco' } }))
    expect((await validateGlb(result.bytes!)).errors).toEqual([])
    const json = glbJson(result.bytes!) as { accessors: { componentType: number; normalized?: boolean }[]; animations: GltfAnimation[] }
    const [weights] = json.animations.flatMap(({ channels, samplers }) => channels.map((channel) => samplers[channel.sampler]!.output))
    expect(json.accessors[weights!]).toMatchObject({ componentType: 5121, normalized: true })
    expect(result.size).toBeLessThan(inputBytes)
  })

  it('keeps every keyframe at meshopt’s lossless level', async () => {
    const platform = await loadPlatform()
    const bytes = new Uint8Array(await readFile(paths.huesitos))
    const input = await readModel(platform, bytes.slice(), 'fbx')
    const options = { engine: 'meshopt', meshopt_compression_level: 'low' }
    const result = success(await pool.run({ name: 'compress', input: { bytes }, format: 'fbx', options }))
    const keys = (doc: Document) =>
      doc
        .getRoot()
        .listAnimations()
        .flatMap((animation) => animation.listSamplers())
        .reduce((n, sampler) => n + sampler.getInput()!.getCount(), 0)
    expect(keys(await platform.io.readBinary(result.bytes!))).toBe(keys(input))
    expect(JSON.stringify(result.details?.notes ?? [])).not.toContain('keyframes dropped')
  })
})
