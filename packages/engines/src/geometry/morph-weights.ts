import { type Accessor, AnimationChannel, AnimationSampler, type Document } from '@gltf-transform/core'

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
  for (const animation of doc.getRoot().listAnimations()) {
    for (const sampler of animation.listSamplers()) {
      const output = sampler.getOutput()
      if (output && readOnlyAsWeights(output)) toUnsignedBytes(output)
    }
  }
}

function readOnlyAsWeights(output: Accessor): boolean {
  const array = output.getArray()
  if (!(array instanceof Float32Array) || output.getSparse()) return false
  const samplers = output.listParents().filter((p): p is AnimationSampler => p instanceof AnimationSampler)
  const channels = samplers.flatMap((s) => s.listParents().filter((p): p is AnimationChannel => p instanceof AnimationChannel))
  if (channels.length === 0 || channels.some((channel) => channel.getTargetPath() !== 'weights')) return false
  if (samplers.some((s) => s.getInput() === output)) return false // also some sampler's keyframe times
  for (const value of array) if (!(value >= -HALF_STEP && value < 1 + HALF_STEP)) return false
  return true
}

/** meshopt_quantizeUnorm(v, 8): clamped, rounded half up. */
function toUnsignedBytes(output: Accessor): void {
  const values = output.getArray() as Float32Array
  const bytes = new Uint8Array(values.length)
  for (let i = 0; i < values.length; i++) bytes[i] = Math.round(Math.min(Math.max(values[i]!, 0), 1) * 255)
  output.setArray(bytes).setNormalized(true)
}
