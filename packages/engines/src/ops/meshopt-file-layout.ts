import { type Accessor, type Animation, type AnimationSampler, type GLTF, PropertyType, type WriterContext } from '@gltf-transform/core'
import { EXTMeshoptCompression } from '@gltf-transform/extensions'
import { shortestFloat32 } from '../geometry/float32.ts'

const TRIANGLES = 4
const REPEAT = 10497

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
 * - JSON without what a reader assumes anyway: the spec's defaults (`"normalized": false` and
 *   `"byteOffset": 0` on accessors, `"byteOffset": 0` on buffer views and in their
 *   EXT_meshopt_compression object, `"mode": 4` on primitives, repeat wrapping on texture samplers,
 *   a sampler left with nothing to say, and linear interpolation on animation samplers), buffer
 *   names, and node transforms and material factors printed to seventeen digits where a float32
 *   needs at most nine (a renderer reads both as float32; BoxTextured's specular-glossiness
 *   material: 0.20000000298023224 three times).
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
    const json = context.jsonDoc.json
    for (const accessor of json.accessors ?? []) {
      if (accessor.normalized === false) delete accessor.normalized
      if (accessor.byteOffset === 0) delete accessor.byteOffset
    }
    for (const view of json.bufferViews ?? []) {
      if (view.byteOffset === 0) delete view.byteOffset
      const meshopt = view.extensions?.[this.extensionName] as { byteOffset?: number } | undefined
      if (meshopt?.byteOffset === 0) delete meshopt.byteOffset
    }
    for (const mesh of json.meshes ?? []) for (const prim of mesh.primitives) if (prim.mode === TRIANGLES) delete prim.mode
    // A GLB holds one binary chunk (plus meshopt's empty fallback): a name on it names nothing a
    // reader shows.
    for (const buffer of json.buffers ?? []) delete buffer.name
    for (const sampler of json.samplers ?? []) {
      if (sampler.wrapS === REPEAT) delete sampler.wrapS
      if (sampler.wrapT === REPEAT) delete sampler.wrapT
    }
    dropEmptySamplers(json)
    for (const animation of json.animations ?? [])
      for (const sampler of animation.samplers) if (sampler.interpolation === 'LINEAR') delete sampler.interpolation
    for (const material of json.materials ?? []) shortenFloats(material)
    for (const node of json.nodes ?? []) {
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

/**
 * A texture with no sampler is read with repeat wrapping and the renderer's own filtering, which is
 * all an empty sampler says: the sampler goes, and the textures that named it name none.
 */
function dropEmptySamplers(json: GLTF.IGLTF): void {
  const samplers = json.samplers ?? []
  const kept: number[] = []
  // The writer leaves unset filters as keys holding undefined, which JSON does not print.
  for (const [index, sampler] of samplers.entries()) if (Object.values(sampler).some((value) => value !== undefined)) kept.push(index)
  if (kept.length === samplers.length) return
  for (const texture of json.textures ?? []) {
    if (texture.sampler === undefined) continue
    const moved = kept.indexOf(texture.sampler)
    if (moved < 0) delete texture.sampler
    else texture.sampler = moved
  }
  if (kept.length === 0) delete json.samplers
  else json.samplers = kept.map((index) => samplers[index]!)
}

/** Every fractional number of a JSON value (a material, its extensions) as the shortest decimal of its float32. */
function shortenFloats(value: unknown): void {
  if (typeof value !== 'object' || value === null) return
  const record = value as Record<string, unknown>
  for (const key of Object.keys(record)) {
    const item = record[key]
    if (typeof item === 'number') record[key] = shortestFloat32(item)
    else shortenFloats(item)
  }
}
