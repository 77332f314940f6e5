import { type Accessor, AnimationChannel, AnimationSampler, type Document } from '@gltf-transform/core'

/** What float32 rounding leaves past a unit quaternion's components (1.0000001 where 1 was meant). */
const ROUNDING = 1e-6

/** Half a step of the 8-bit grid: values this close outside [0, 1] round to the same code as clamped ones. */
const HALF_STEP = 0.5 / 255

/**
 * Stores the keyframes of morph-weight animations as 8-bit normalized integers, as gltfpack does
 * (core glTF allows unsigned-byte normalized outputs for `weights`): a quarter of the float bytes,
 * at a precision of 1/255 of a weight. Only outputs whose every value lies in [0, 1] (within half a
 * step: exporters leave −1.5e-7 where 0 was meant) and that no other kind of channel reads; cubic
 * spline tangents outside that range keep their floats. AnimatedMorphCube: 1 016 → 254 B.
 *
 * ```ts
 * quantizeMorphWeights(doc) // before writing with meshopt
 * ```
 */
export function quantizeMorphWeights(doc: Document): void {
  for (const output of animationOutputs(doc)) if (readOnlyAs(output, 'weights', -HALF_STEP, 1 + HALF_STEP)) toUnsignedBytes(output)
}

/** Whether only channels animating `path` read the output (not as some sampler's times too), its every value within [low, high). */
function readOnlyAs(output: Accessor, path: string, low: number, high: number): boolean {
  if (!plainFloats(output)) return false
  const samplers = samplersReading(output)
  const paths = pathsAnimatedBy(samplers)
  if (paths.size !== 1 || !paths.has(path)) return false
  if (samplers.some((s) => s.getInput() === output)) return false // also some sampler's keyframe times
  for (const value of output.getArray() as Float32Array) if (!(value >= low && value < high)) return false
  return true
}

/** The animation samplers reading an accessor, as keyframe times or values. */
export function samplersReading(accessor: Accessor): AnimationSampler[] {
  return accessor.listParents().filter((parent): parent is AnimationSampler => parent instanceof AnimationSampler)
}

/** The kinds of value (`rotation`, `weights`, …) the channels reading these samplers animate. */
export function pathsAnimatedBy(samplers: AnimationSampler[]): Set<string | null> {
  const channels = samplers.flatMap((s) => s.listParents().filter((p): p is AnimationChannel => p instanceof AnimationChannel))
  return new Set(channels.map((channel) => channel.getTargetPath()))
}

/** Keyframes stored whole as floats (not sparse, not already integers): what the keyframe steps work on. */
export function plainFloats(accessor: Accessor): boolean {
  return accessor.getArray() instanceof Float32Array && !accessor.getSparse()
}

/**
 * Stores the keyframes of rotation animations as 16-bit normalized integers (core glTF allows byte and
 * short normalized outputs for `rotation`): half the float bytes, each quaternion component within
 * 1/65534 of its float. For encodings that leave animations as floats, Draco's and meshopt's without
 * filters; meshopt's filters code rotations their own way (its 16-bit quaternion filter). Cubic-spline
 * tangents outside [−1, 1] keep their floats.
 */
export function quantizeRotationKeyframes(doc: Document): void {
  for (const output of animationOutputs(doc)) if (readOnlyAs(output, 'rotation', -1 - ROUNDING, 1 + ROUNDING)) toSignedShorts(output)
}

function animationOutputs(doc: Document): Set<Accessor> {
  const outputs = new Set<Accessor>()
  for (const animation of doc.getRoot().listAnimations())
    for (const sampler of animation.listSamplers()) {
      const output = sampler.getOutput()
      if (output) outputs.add(output)
    }
  return outputs
}

/** meshopt_quantizeSnorm(v, 16): clamped, rounded to nearest. */
function toSignedShorts(output: Accessor): void {
  const values = output.getArray() as Float32Array
  const shorts = new Int16Array(values.length)
  for (let i = 0; i < values.length; i++) shorts[i] = Math.round(Math.min(Math.max(values[i]!, -1), 1) * 32767)
  output.setArray(shorts).setNormalized(true)
}

/** meshopt_quantizeUnorm(v, 8): clamped, rounded half up. */
function toUnsignedBytes(output: Accessor): void {
  const values = output.getArray() as Float32Array
  const bytes = new Uint8Array(values.length)
  for (let i = 0; i < values.length; i++) bytes[i] = Math.round(Math.min(Math.max(values[i]!, 0), 1) * 255)
  output.setArray(bytes).setNormalized(true)
}
