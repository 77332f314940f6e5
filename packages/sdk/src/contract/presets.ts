import type { CompressOptions } from './fields.ts'

/** Names of the compress presets (a Mos extension, docs/api.md). */
export const COMPRESS_PRESET_NAMES = ['web', 'mobile', 'archive'] as const

export type CompressPreset = (typeof COMPRESS_PRESET_NAMES)[number]

/** The extension fields a preset may set: never the contract's own, so a preset cannot change what a variant publishes. */
export type PresetFields = Pick<
  CompressOptions,
  | 'simplify_ratio'
  | 'simplify_error'
  | 'texture_max_size'
  | 'texture_power_of_two'
  | 'texture_progressive_jpeg'
  | 'palette'
  | 'merge'
  | 'instance'
>

/**
 * Exactly the fields each preset sets; a field the request gives itself wins. The contract's
 * fields (engine, level, quantization) are left to the request, so a preset means the same with
 * either engine.
 * - web: fewer draw calls and nodes, textures at most 2048 px (gltfpack's default scene merge),
 *   JPEG textures progressive where that is smaller (browsers decode them natively).
 *   Not `instance`: its arrays cost more than the nodes they replace (meshopt: 2CylinderEngine
 *   +2.5%, ShapeCollection +5.7%, measured), and a preset must not grow the file; nor `palette`,
 *   whose coordinates cost more than the primitives it joins save (meshopt: five corpus meshes
 *   in five colours, 5 → 2 draw calls, +0.7%).
 * - mobile: web, plus textures at most 1024 px with power-of-two sides and half the triangles
 *   (within 1% of the mesh's extent).
 * - archive: the scene graph, every triangle and every texel kept (the same as no preset, said
 *   explicitly, so a client can name the intent and a later default change does not reach it).
 */
export const COMPRESS_PRESETS: Readonly<Record<CompressPreset, Readonly<PresetFields>>> = {
  web: { merge: true, texture_max_size: 2048, texture_progressive_jpeg: true },
  mobile: {
    merge: true,
    texture_max_size: 1024,
    texture_power_of_two: true,
    texture_progressive_jpeg: true,
    simplify_ratio: 0.5,
    simplify_error: 0.01,
  },
  archive: { merge: false, palette: false, instance: false, texture_power_of_two: false, texture_progressive_jpeg: false },
}
