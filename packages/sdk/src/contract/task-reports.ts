import { z } from 'zod'

/**
 * What Mos's operations report on a completed task record, beside the contract's fields (Mos
 * extensions, docs/api.md): each optional, present where the step ran or had something to say. The
 * record schemas take them so a client reads them typed; a server without them still passes.
 */

const count = z.number().int().nonnegative()

/** `merge`: nodes and draw calls (primitives drawn, an instanced node once) before and after. */
export const mergeReportSchema = z.object({
  nodes_before: count,
  nodes_after: count,
  draw_calls_before: count,
  draw_calls_after: count,
})

/** `instance`: meshes now drawn once with EXT_mesh_gpu_instancing, and the instances they carry. */
export const instanceReportSchema = z.object({ instanced_meshes: count, instances: count })

/** `palette`: untextured materials gathered into palette textures. */
export const paletteReportSchema = z.object({
  materials_before: count,
  materials_after: count,
  /** Distinct values in the palette: one block each. */
  entries: count,
  textures: z.array(z.object({ slot: z.enum(['baseColor', 'emissive', 'metallicRoughness']), width: count, height: count, bytes: count })),
})

/** `simplify`: triangles the file holds before and after, the share kept and the largest error reached (of the extent). */
export const simplifyReportSchema = z.object({
  target_ratio: z.number().min(0).max(1),
  max_error: z.number().min(0).max(1),
  triangles_before: count,
  triangles_after: count,
  ratio: z.number().nonnegative(),
  error: z.number().nonnegative(),
  /** Primitives left as they were, and why. */
  skipped: z.array(z.string()),
})

/** One texture a step re-encoded, resized or re-coded (bytes and MIME types before and after). */
export const textureReportSchema = z.object({
  name: z.string(),
  slots: z.array(z.string()).optional(),
  from: z.string(),
  to: z.string(),
  before: count,
  after: count,
  /** Why the texture was left as it was. */
  skipped: z.string().optional(),
  note: z.string().optional(),
  mode: z.enum(['etc1s', 'uastc']).optional(),
  colorSpace: z.enum(['srgb', 'linear']).optional(),
  resizedFrom: z.tuple([count, count]).optional(),
  progressive: z.boolean().optional(),
  size: z.tuple([count, count]).optional(),
})

/**
 * `size_rule`: the result came out larger than the input, and what the service did (kept the input,
 * or returned the result and why), docs/api.md's output-size rule.
 */
export const sizeRuleReportSchema = z.object({
  input_bytes: count,
  result_bytes: count,
  /** True when the input's bytes were returned instead of the result. */
  kept_input: z.boolean(),
  /** A zip upload: what its files hold unpacked (`input_bytes` is the deflated archive's). */
  input_unpacked_bytes: count.optional(),
  note: z.string(),
})

/** The reports a completed record may carry (the fields of completedTaskSchema beyond the contract's). */
export const taskReportsShape = {
  /** What the target could not hold, or what was changed or dropped to write it (nothing lost without a word). */
  notes: z.array(z.string()).optional(),
  /** What the reader met in the input and worked around. */
  warnings: z.array(z.string()).optional(),
  merge: mergeReportSchema.optional(),
  instance: instanceReportSchema.optional(),
  palette: paletteReportSchema.optional(),
  simplify: simplifyReportSchema.optional(),
  textures_resized: z.array(textureReportSchema).optional(),
  textures_repacked: z.array(textureReportSchema).optional(),
  /** The texture operations' reports, one per texture, and their byte totals. */
  textures: z.array(textureReportSchema).optional(),
  texture_bytes_before: count.optional(),
  texture_bytes_after: count.optional(),
  /** repair's counts, one per kind of repair (docs/api.md). */
  repairs: z.record(z.string(), count).optional(),
  size_rule: sizeRuleReportSchema.optional(),
}

export type MergeReport = z.infer<typeof mergeReportSchema>
export type InstanceReport = z.infer<typeof instanceReportSchema>
export type PaletteReport = z.infer<typeof paletteReportSchema>
export type SimplifyReport = z.infer<typeof simplifyReportSchema>
export type TextureReport = z.infer<typeof textureReportSchema>
export type SizeRuleReport = z.infer<typeof sizeRuleReportSchema>
