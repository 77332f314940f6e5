import type { Animation, AnimationChannel, Node } from '@gltf-transform/core'

/**
 * glTF animations resampled for formats that animate a node's whole transform (COLLADA's
 * `<matrix>` channel): per node one track of local matrices at the union of its channels' key
 * times. Morph weight channels are counted in `notes` and dropped, like the morph targets.
 */
export interface ExportAnimation<N = Node> {
  name: string
  tracks: ExportTrack<N>[]
}

/** One animated node: its local matrix at each key time. */
export interface ExportTrack<N = Node> {
  node: N
  times: Float32Array
  /** 16 per key, the local matrix row-major (translation in the last column). */
  matrices: Float32Array
  interpolation: 'LINEAR' | 'STEP'
}

/**
 * Keys added between two cubic-spline keys when it is resampled as linear: 8 segments follow
 * the curve within a few percent of a key interval's change for ordinary ease curves.
 */
const CUBIC_STEPS = 8

type Sampler = (time: number, out: number[]) => void

/** Resamples one glTF animation; `notes` receives what had to change (cubic splines made linear). */
export function sampleAnimation(animation: Animation, notes: string[]): ExportAnimation {
  const byNode = new Map<Node, Map<string, AnimationChannel>>()
  for (const channel of animation.listChannels()) {
    const node = channel.getTargetNode()
    const path = channel.getTargetPath()
    const sampler = channel.getSampler()
    if (!node || !path || !sampler?.getInput() || !sampler.getOutput()) continue
    let paths = byNode.get(node)
    if (!paths) byNode.set(node, (paths = new Map()))
    paths.set(path, channel)
  }
  let cubic = 0
  let weights = 0
  const tracks: ExportTrack[] = []
  for (const [node, paths] of byNode) {
    const channels = [...paths.values()].filter((c) => c.getTargetPath() !== 'weights')
    if (paths.has('weights')) weights++
    cubic += channels.filter((c) => c.getSampler()!.getInterpolation() === 'CUBICSPLINE').length
    if (channels.length > 0) tracks.push(transformTrack(node, channels))
  }
  const name = animation.getName() || 'animation'
  if (cubic > 0) notes.push(`${cubic} cubic-spline animation channel(s) of "${name}" sampled to linear keys`)
  if (weights > 0)
    notes.push(
      `${weights} morph weight animation channel(s) of "${name}" dropped with the morph targets (COLLADA animations here move nodes only)`,
    )
  return { name: animation.getName(), tracks }
}

function transformTrack(node: Node, channels: AnimationChannel[]): ExportTrack {
  const times = keyTimes(channels)
  const sample = (path: string, fallback: number[]): Sampler => {
    const channel = channels.find((c) => c.getTargetPath() === path)
    return channel ? channelSampler(channel, path === 'rotation') : (_, out) => out.splice(0, out.length, ...fallback)
  }
  const translation = sample('translation', node.getTranslation())
  const rotation = sample('rotation', node.getRotation())
  const scale = sample('scale', node.getScale())
  const values = new Float32Array(times.length * 16)
  const t: number[] = []
  const r: number[] = []
  const s: number[] = []
  times.forEach((time, k) => {
    translation(time, t)
    rotation(time, r)
    scale(time, s)
    values.set(trsMatrix(t as Vec3, normalize(r) as [number, number, number, number], s as Vec3), k * 16)
  })
  return { node, times, matrices: values, interpolation: interpolationOf(channels) }
}

/** STEP only when every channel steps; a cubic spline becomes linear keys. */
function interpolationOf(channels: AnimationChannel[]): 'LINEAR' | 'STEP' {
  return channels.every((c) => c.getSampler()!.getInterpolation() === 'STEP') ? 'STEP' : 'LINEAR'
}

/** The sorted union of the channels' key times, with extra keys inside cubic-spline intervals. */
function keyTimes(channels: AnimationChannel[]): Float32Array {
  const times = new Set<number>()
  for (const channel of channels) {
    const sampler = channel.getSampler()!
    const input = sampler.getInput()!
    const cubic = sampler.getInterpolation() === 'CUBICSPLINE'
    for (let k = 0; k < input.getCount(); k++) {
      const time = input.getScalar(k)
      times.add(time)
      if (cubic && k + 1 < input.getCount()) {
        const next = input.getScalar(k + 1)
        for (let step = 1; step < CUBIC_STEPS; step++) times.add(time + ((next - time) * step) / CUBIC_STEPS)
      }
    }
  }
  return Float32Array.from([...times].sort((a, b) => a - b))
}

/** Evaluates a channel at any time as glTF defines it (clamped outside its keys). */
function channelSampler(channel: AnimationChannel, quaternion: boolean): Sampler {
  const sampler = channel.getSampler()!
  const input = sampler.getInput()!
  const output = sampler.getOutput()!
  const interpolation = sampler.getInterpolation()
  const keys = input.getCount()
  const size = output.getElementSize()
  const values = output.getArray()!
  const denormalize = output.getNormalized() ? (v: number) => normalizedValue(v, output.getComponentType()) : (v: number) => v
  const cubic = interpolation === 'CUBICSPLINE'
  // A cubic-spline key holds (in-tangent, value, out-tangent).
  const at = (key: number, part: number, c: number) => denormalize(values[(cubic ? key * 3 + part : key) * size + c]!)
  return (time, out) => {
    out.length = size
    let next = 0
    // The first key after `time`: at a key's own time this gives that key's value (u = 0).
    while (next < keys && input.getScalar(next) <= time) next++
    if (next === 0 || next === keys) {
      const key = next === 0 ? 0 : keys - 1
      for (let c = 0; c < size; c++) out[c] = at(key, 1, c)
      return
    }
    const t0 = input.getScalar(next - 1)
    const t1 = input.getScalar(next)
    const dt = t1 - t0
    const u = dt > 0 ? (time - t0) / dt : 0
    if (interpolation === 'STEP') {
      for (let c = 0; c < size; c++) out[c] = at(next - 1, 1, c)
    } else if (cubic) {
      const u2 = u * u
      const u3 = u2 * u
      for (let c = 0; c < size; c++)
        out[c] =
          (2 * u3 - 3 * u2 + 1) * at(next - 1, 1, c) +
          (u3 - 2 * u2 + u) * dt * at(next - 1, 2, c) +
          (-2 * u3 + 3 * u2) * at(next, 1, c) +
          (u3 - u2) * dt * at(next, 0, c)
    } else if (quaternion) {
      slerp(
        [0, 1, 2, 3].map((c) => at(next - 1, 1, c)),
        [0, 1, 2, 3].map((c) => at(next, 1, c)),
        u,
        out,
      )
    } else {
      for (let c = 0; c < size; c++) out[c] = at(next - 1, 1, c) + (at(next, 1, c) - at(next - 1, 1, c)) * u
    }
  }
}

function normalizedValue(value: number, componentType: number): number {
  // glTF's normalized integer types for animation outputs: BYTE, UNSIGNED_BYTE, SHORT, UNSIGNED_SHORT.
  const max: Record<number, number> = { 5120: 127, 5121: 255, 5122: 32767, 5123: 65535 }
  return Math.max(value / (max[componentType] ?? 1), -1)
}

function slerp(a: number[], b: number[], u: number, out: number[]): void {
  let dot = a[0]! * b[0]! + a[1]! * b[1]! + a[2]! * b[2]! + a[3]! * b[3]!
  const sign = dot < 0 ? -1 : 1
  dot *= sign
  let wa = 1 - u
  let wb = u * sign
  if (dot < 0.9995) {
    const angle = Math.acos(dot)
    const sin = Math.sin(angle)
    wa = Math.sin((1 - u) * angle) / sin
    wb = (Math.sin(u * angle) / sin) * sign
  }
  for (let c = 0; c < 4; c++) out[c] = a[c]! * wa + b[c]! * wb
}

function normalize(q: number[]): number[] {
  const length = Math.hypot(q[0]!, q[1]!, q[2]!, q[3]!) || 1
  return q.map((v) => v / length)
}

type Vec3 = [number, number, number]

/** A local transform as a row-major 4×4 matrix (translation in the last column), as COLLADA writes it. */
export function trsMatrix(t: Vec3, [x, y, z, w]: [number, number, number, number], [sx, sy, sz]: Vec3): number[] {
  return [
    (1 - 2 * (y * y + z * z)) * sx,
    2 * (x * y - z * w) * sy,
    2 * (x * z + y * w) * sz,
    t[0],
    2 * (x * y + z * w) * sx,
    (1 - 2 * (x * x + z * z)) * sy,
    2 * (y * z - x * w) * sz,
    t[1],
    2 * (x * z - y * w) * sx,
    2 * (y * z + x * w) * sy,
    (1 - 2 * (x * x + y * y)) * sz,
    t[2],
    0,
    0,
    0,
    1,
  ]
}
