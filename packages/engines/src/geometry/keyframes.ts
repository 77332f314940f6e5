import { type Accessor, type AnimationSampler, type Document, getBounds, Root } from '@gltf-transform/core'
import { pathsAnimatedBy, plainFloats, samplersReading } from './keyframe-outputs.ts'

/**
 * How far the animation may move from a keyframe dropped: 1/16384 of the scene's largest side for a
 * translation, of a unit quaternion's components for a rotation, of 1 for a scale or a morph weight.
 * The step of compress's 14-bit position grid, which Draco applies to the geometry anyway.
 */
export const KEYFRAME_TOLERANCE = 2 ** -14

/** What an accessor's own JSON costs in a file (its entry and its share of a buffer view's): a times accessor of its own must save more. */
const ACCESSOR_JSON_BYTES = 100

type Interpolate = 'lerp' | 'slerp' | 'step'

/** Keyframes before and after, over every sampler reduced or not. */
export interface KeyframeReport {
  before: number
  after: number
}

/**
 * Drops the keyframes of LINEAR and STEP samplers that the interpolation between the keys kept
 * reproduces within KEYFRAME_TOLERANCE: every key dropped is checked against the segment that
 * finally spans it (glTF-Transform's resample() checks each against its neighbours only, which lets
 * a slow curve drift further). Keys that share a time (a jump) stay, as do cubic-spline samplers and
 * quaternions whose shortest path would change. A sampler whose times other samplers share keeps them
 * unless its own savings outweigh a times accessor of its own. A constant track keeps its two ends.
 *
 * ```ts
 * const { before, after } = reduceKeyframes(doc)
 * ```
 */
export function reduceKeyframes(doc: Document): KeyframeReport {
  const report: KeyframeReport = { before: 0, after: 0 }
  const animations = doc.getRoot().listAnimations()
  if (animations.length === 0) return report
  const extent = sceneExtent(doc)
  for (const animation of animations) {
    for (const sampler of animation.listSamplers()) {
      const count = sampler.getInput()?.getCount() ?? 0
      report.before += count
      report.after += reduceSampler(sampler, extent) ?? count
    }
  }
  if (report.after < report.before) shareAlikeKeyframes(doc)
  return report
}

/**
 * Samplers whose keyframe times or values came out alike (constant tracks all keep their two ends)
 * read one accessor, the others disposed: what a dedup() of the whole file would find, without
 * hashing its geometry again.
 */
function shareAlikeKeyframes(doc: Document): void {
  const byContent = new Map<string, Accessor>()
  const shareable = (accessor: Accessor | null): accessor is Accessor => accessor !== null && plainFloats(accessor)
  const alike = (accessor: Accessor) => {
    const array = accessor.getArray() as Float32Array
    const key = `${accessor.getType()} ${Buffer.from(array.buffer, array.byteOffset, array.byteLength).toString('latin1')}`
    const first = byContent.get(key) ?? byContent.set(key, accessor).get(key)!
    return first === accessor ? undefined : first
  }
  for (const animation of doc.getRoot().listAnimations())
    for (const sampler of animation.listSamplers()) {
      for (const [accessor, set] of [
        [sampler.getInput(), (a: Accessor) => sampler.setInput(a)],
        [sampler.getOutput(), (a: Accessor) => sampler.setOutput(a)],
      ] as const) {
        if (!shareable(accessor)) continue
        const first = alike(accessor)
        if (!first) continue
        set(first)
        if (accessor.listParents().every((parent) => parent instanceof Root)) accessor.dispose()
      }
    }
}

/** The largest side of the scenes' bounds (1 where they draw nothing measurable). */
function sceneExtent(doc: Document): number {
  let extent = 0
  for (const scene of doc.getRoot().listScenes()) {
    const { min, max } = getBounds(scene)
    for (let axis = 0; axis < 3; axis++) extent = Math.max(extent, max[axis]! - min[axis]!)
  }
  return Number.isFinite(extent) && extent > 0 ? extent : 1
}

/** Reduces one sampler in place where it can and where it pays; answers its keys left, or undefined where untouched. */
function reduceSampler(sampler: AnimationSampler, extent: number): number | undefined {
  const input = sampler.getInput()
  const output = sampler.getOutput()
  const path = pathOf(sampler)
  const interpolate = path && interpolationOf(sampler, path)
  if (!input || !output || !interpolate || !plainFloats(input) || !plainFloats(output)) return undefined
  const times = input.getArray() as Float32Array
  const values = output.getArray() as Float32Array
  const size = output.getElementSize()
  if (times.length < 3 || values.length !== times.length * size) return undefined
  const tolerance = KEYFRAME_TOLERANCE * (path === 'translation' ? extent : 1)
  const kept = keptKeys(times, values, size, interpolate, tolerance)
  const removed = times.length - kept.length
  if (removed === 0) return undefined
  // Times shared with other samplers stay for them: this one's own copy must cost less than it saves.
  const shared = (accessor: Accessor) => samplersReading(accessor).length > 1
  if (shared(input) && removed * size * 4 <= kept.length * 4 + ACCESSOR_JSON_BYTES) return undefined
  const ownOf = (accessor: Accessor) => (shared(accessor) ? accessor.clone() : accessor)
  sampler.setInput(ownOf(input).setArray(Float32Array.from(kept, (k) => times[k]!)))
  const reducedValues = new Float32Array(kept.length * size)
  kept.forEach((k, i) => reducedValues.set(values.subarray(k * size, (k + 1) * size), i * size))
  sampler.setOutput(ownOf(output).setArray(reducedValues))
  return kept.length
}

/** The one kind of value the sampler's channels animate; undefined where none reads it, or two kinds do. */
function pathOf(sampler: AnimationSampler): string | undefined {
  const paths = pathsAnimatedBy([sampler])
  return paths.size === 1 ? ([...paths][0] ?? undefined) : undefined
}

function interpolationOf(sampler: AnimationSampler, path: string): Interpolate | undefined {
  // glTF's default where none is set (a sampler made in code has none).
  const interpolation = sampler.getInterpolation() ?? 'LINEAR'
  if (interpolation === 'STEP') return 'step'
  if (interpolation !== 'LINEAR') return undefined
  return path === 'rotation' ? 'slerp' : 'lerp'
}

/**
 * The indices of the keys to keep: the first, then from each key kept the farthest one whose segment
 * passes within the tolerance of every key it skips, found by doubling the reach while it holds and
 * halving back between the last reach that held and the first that did not. Each reach accepted is
 * checked key by key, so what is dropped is always within the tolerance; the search costs about
 * n·log(segment) checks (a track that cannot drop a key costs one check a key).
 */
function keptKeys(times: Float32Array, values: Float32Array, size: number, interpolate: Interpolate, tolerance: number): number[] {
  const last = times.length - 1
  const kept = [0]
  const sample = new Float64Array(size)
  let anchor = 0
  while (anchor < last) {
    let reach = anchor + 1 // a segment between neighbours skips nothing
    let fails = last + 1 // past the end: nothing to narrow once the reach gets there
    for (let stride = 2; reach < last; stride *= 2) {
      const end = Math.min(last, anchor + stride)
      if (!spans(anchor, end)) {
        fails = end
        break
      }
      reach = end
    }
    while (fails - reach > 1) {
      const middle = Math.floor((reach + fails) / 2)
      if (spans(anchor, middle)) reach = middle
      else fails = middle
    }
    kept.push(reach)
    anchor = reach
  }
  return kept

  /** Whether the interpolation from key `a` to key `e` passes within the tolerance of every key between them. */
  function spans(a: number, e: number): boolean {
    if (interpolate === 'slerp' && dot(values, a * size, e * size, size) < 0) return false
    for (let j = a + 1; j < e; j++) {
      // A key sharing its time with a neighbour is a jump: it stays.
      if (times[j] === times[j - 1] || times[j] === times[j + 1]) return false
      const t = (times[j]! - times[a]!) / (times[e]! - times[a]!)
      interpolateInto(sample, values, a * size, e * size, t, interpolate)
      for (let c = 0; c < size; c++) if (!(Math.abs(sample[c]! - values[j * size + c]!) <= tolerance)) return false
    }
    return true
  }
}

function dot(values: Float32Array, a: number, b: number, size: number): number {
  let sum = 0
  for (let c = 0; c < size; c++) sum += values[a + c]! * values[b + c]!
  return sum
}

/** The value between the keys at offsets `a` and `b`, a share `t` of the way (glTF 2.0, Appendix C). */
function interpolateInto(out: Float64Array, values: Float32Array, a: number, b: number, t: number, interpolate: Interpolate): void {
  const size = out.length
  if (interpolate === 'step') {
    for (let c = 0; c < size; c++) out[c] = values[a + c]!
    return
  }
  let wa = 1 - t
  let wb = t
  if (interpolate === 'slerp') {
    const cos = Math.min(1, dot(values, a, b, size))
    const angle = Math.acos(cos)
    // Nearly equal quaternions: slerp is lerp to well below the tolerance.
    if (angle > 1e-6) {
      wa = Math.sin(wa * angle) / Math.sin(angle)
      wb = Math.sin(wb * angle) / Math.sin(angle)
    }
  }
  for (let c = 0; c < size; c++) out[c] = wa * values[a + c]! + wb * values[b + c]!
}
