import { type Accessor, type Animation, type AnimationSampler, PropertyType, type WriterContext } from '@gltf-transform/core'
import { EXTMeshoptCompression } from '@gltf-transform/extensions'
import { shortestFloat32 } from '../geometry/float32.ts'

/**
 * EXT_meshopt_compression writing gltfpack's file layout:
 *
 * - one buffer view per kind of vertex stream for the whole file, instead of one per primitive:
 *   every view costs ~230 bytes of JSON and its own codec header and tail (16 KB of JSON alone on
 *   a 29-mesh CAD model), and the codec compresses one long stream better than many short ones.
 *   glTF-Transform's encoder groups vertex accessors by parent only when the writer asks it to, so
 *   this asks it not to while the encoder claims its accessors, and restores the writer's setting
 *   for whatever the encoder leaves (sparse accessors);
 * - the keyframe times of morph-weight animations coded like the other animation streams (see
 *   `withWeightTimesDetached`);
 * - node transforms printed with the digits a float32 needs, where glTF-Transform prints seventeen
 *   (a renderer reads float32; the rest of the JSON is compacted for every file Mos writes, in
 *   io/compact-json.ts).
 */
export class MeshoptFileLayout extends EXTMeshoptCompression {
  override prewrite(context: WriterContext, propertyType: PropertyType): this {
    if (propertyType !== PropertyType.ACCESSOR) return super.prewrite(context, propertyType)
    const grouped = context.accessorUsageGroupedByParent
    const kept = new Set(grouped)
    grouped.clear()
    try {
      return withWeightTimesDetached(context, this.document.getRoot().listAnimations(), () => super.prewrite(context, propertyType))
    } finally {
      for (const usage of kept) grouped.add(usage)
    }
  }

  override write(context: WriterContext): this {
    super.write(context)
    // Node transforms to the digits a float32 needs: the positions under them are quantized anyway.
    // The rest of the JSON is compacted for every file Mos writes (io/compact-json.ts).
    for (const node of context.jsonDoc.json.nodes ?? []) {
      for (const key of ['translation', 'rotation', 'scale', 'matrix'] as const) {
        const values = node[key]
        if (values) node[key] = values.map(shortestFloat32) as typeof values
      }
    }
    return this
  }
}

/**
 * glTF-Transform's encoder skips every accessor of a sampler that animates morph weights, its
 * keyframe times included: an 8-bit weights output has a stride the codec cannot take, but the
 * times are floats like any other animation's (AnimatedMorphCube: 508 B plain, 386 B coded, as
 * gltfpack codes them). It finds a sampler's channel through the accessor's parents, so while it
 * claims its accessors the times are detached from the weights samplers, then put back (the
 * writer's accessor indices follow the accessors, not the samplers), with the bounds an animation
 * input must carry, which the writer gives only to accessors it sees as inputs.
 */
function withWeightTimesDetached<T>(context: WriterContext, animations: Animation[], claim: () => T): T {
  const detached: [AnimationSampler, Accessor][] = []
  for (const animation of animations) {
    for (const channel of animation.listChannels()) {
      const sampler = channel.getSampler()
      const input = sampler?.getInput()
      if (channel.getTargetPath() !== 'weights' || !sampler || !input || input.getSparse()) continue
      detached.push([sampler, input])
      sampler.setInput(null)
    }
  }
  try {
    return claim()
  } finally {
    for (const [sampler, input] of detached) {
      sampler.setInput(input)
      const index = context.accessorIndexMap.get(input)
      const def = index === undefined ? undefined : context.jsonDoc.json.accessors?.[index]
      if (def) Object.assign(def, { max: input.getMax([]).map(Math.fround), min: input.getMin([]).map(Math.fround) })
    }
  }
}
