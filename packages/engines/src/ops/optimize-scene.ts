import type { Document } from '@gltf-transform/core'
import { dedup, dequantize } from '@gltf-transform/functions'
import type { MeshoptSimplifier } from 'meshoptimizer'
import { z } from 'zod'
import { countMeshTriangles } from '../geometry-stats.ts'
import { weldWhereNeeded } from '../geometry/weld-where-needed.ts'
import { clearNegativeZeros } from '../geometry/negative-zeros.ts'
import { assertEncodableGeometry } from './encodable-geometry.ts'
import { dropUnreadTexcoords } from './unread-texcoords.ts'
import { dropWhiteVertexColors } from './white-colors.ts'
import { instanceMeshes } from './instance-meshes.ts'
import { joinMeshPrimitives } from './join-mesh-primitives.ts'
import { type MergeReport, mergeMeshes, sceneCounts } from './merge-meshes.ts'
import { paletteMaterials } from './palette-materials.ts'
import { simplifyMeshes } from './simplify-meshes.ts'
import type { TextureLimits } from './texture-limits.ts'
import type { SharpEncoder } from './texture-optimize.ts'
import type { TextureReport } from './texture-report.ts'
import { textureResize } from './texture-resize.ts'
import type { ResizedPixels } from './resized-pixels.ts'

/**
 * Compress's Mos extensions, in their field names (docs/api.md, "Mos extensions"): the compress
 * operation's option schema takes them from here.
 */
export const SCENE_OPTIONS = z.object({
  simplify_ratio: z.number().gt(0).max(1).optional(),
  simplify_error: z.number().min(0).max(1).optional(),
  texture_max_size: z.number().int().min(1).optional(),
  texture_power_of_two: z.boolean().optional(),
  palette: z.boolean().optional(),
  merge: z.boolean().optional(),
  instance: z.boolean().optional(),
})

/** The scene steps a compress request asks for. */
export type SceneOptions = z.infer<typeof SCENE_OPTIONS>

/** A compress request's options split into the scene steps' (the keys of SCENE_OPTIONS) and the rest, the encoder's. */
export function splitSceneOptions<T extends SceneOptions>(options: T): { scene: SceneOptions; encoding: Omit<T, keyof SceneOptions> } {
  const scene: Record<string, unknown> = {}
  const encoding: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(options)) (Object.hasOwn(SCENE_OPTIONS.shape, key) ? scene : encoding)[key] = value
  return { scene: scene as SceneOptions, encoding: encoding as Omit<T, keyof SceneOptions> }
}

/** What the scene steps use, passed in by the operation (the thread's resources). */
export interface SceneResources extends TextureLimits {
  simplifier: typeof MeshoptSimplifier
  sharp: SharpEncoder
  imageThreads: number
  /** Where to say what a step dropped from the file (the task's `details.notes`). */
  notes?: string[]
  /** The bits the encoder stores texture coordinates on (undefined: floats), which a palette's layout must respect. */
  texcoordBits?: number
  /** Given where compress re-encodes the textures after (`texture_format`): filled with the resized pixels for it (resized-pixels.ts). */
  resizedPixels?: ResizedPixels
}

/**
 * The error limit when only `simplify_ratio` is given: gltfpack's default for `-si` (its `-se`),
 * 1% of the mesh's extent. Only `simplify_error` given aims at as few triangles as that allows.
 */
export const SIMPLIFY_DEFAULT_ERROR = 0.01

/**
 * Runs the scene steps a compress request asked for, before the geometry is encoded: resize
 * textures, gather untextured materials into a palette, then in gltfpack's order instance repeated
 * meshes, merge the rest, simplify the merged meshes (one budget over what is drawn together).
 * Returns the details each step reports; none is run, and the document is untouched, when no option
 * asks for it.
 */
export async function optimizeScene(doc: Document, o: SceneOptions, resources: SceneResources): Promise<Record<string, unknown>> {
  const details: Record<string, unknown> = {}
  const simplify = o.simplify_ratio !== undefined || o.simplify_error !== undefined
  // The geometry steps trust their input: meshoptimizer's simplifier read indices past the vertices
  // in its memory (IndexOutOfRange.gltf came back "simplified"; AllIndicesOutOfRange failed with
  // "memory access out of bounds"), and join() would copy what such indices point at. Refused here as
  // compress refuses it without the steps, with the same reason.
  if (o.palette || o.instance || o.merge || simplify) assertEncodableGeometry(doc)
  // Textures are resized first, so the palette's are made within the size asked for, and left whole.
  if (o.texture_max_size !== undefined || o.texture_power_of_two) details.textures_resized = await resizeTextures(doc, o, resources)
  // Repeats are found by mesh identity: identical meshes read as copies must become one first.
  if (o.palette || o.instance || o.merge) await doc.transform(dedup())
  if (o.palette) {
    // Before instance and merge, so primitives that now share a material join; after the dedup, which
    // would share the coordinates of primitives alike in length and colour, and merge joins no shared stream.
    const palette = await paletteMaterials(
      doc,
      { maxSize: o.texture_max_size, texcoordBits: resources.texcoordBits },
      resources.notes ?? [],
    )
    if (palette) details.palette = palette
  }
  if (o.instance) details.instance = instanceMeshes(doc)
  if (o.merge) details.merge = await mergeMeshes(doc)
  if (simplify) {
    // Float attributes, and one vertex per position and attribute values, so seams are the only splits.
    // Primitives of one mesh under one material are joined first (compress would join them after), so
    // the simplifier sees no border between them (pirate.obj's seven OBJ groups).
    await doc.transform(dedup(), dequantize())
    // What compress drops anyway goes first: a vertex split by what no one sees is a seam to the
    // simplifier (beast.obj's UVs, which no texture reads; a −0 beside a 0 in chr_knight's normals).
    dropWhiteVertexColors(doc)
    const dropped = dropUnreadTexcoords(doc) // whether or not the caller keeps the notes
    resources.notes?.push(...dropped)
    clearNegativeZeros(doc)
    await doc.transform(weldWhereNeeded())
    joinMeshPrimitives(doc)
    const ratio = o.simplify_ratio ?? 0
    const error = o.simplify_error ?? SIMPLIFY_DEFAULT_ERROR
    details.simplify = { target_ratio: ratio, max_error: error, ...simplifyMeshes(doc, { simplifier: resources.simplifier, ratio, error }) }
  }
  return details
}

/** Runs texture_max_size and texture_power_of_two's resize; answers its report. */
async function resizeTextures(doc: Document, o: SceneOptions, resources: SceneResources): Promise<TextureReport[]> {
  const report: TextureReport[] = []
  const { sharp: encoder, imageThreads: concurrency, maxTextureBytes, maxPixels, notes, resizedPixels: pixels } = resources
  const maxSize = o.texture_max_size ?? Number.POSITIVE_INFINITY
  const powerOfTwo = o.texture_power_of_two
  await doc.transform(textureResize({ encoder, maxSize, powerOfTwo, concurrency, maxTextureBytes, maxPixels, report, notes, pixels }))
  return report
}

/**
 * Completes the simplify details once the geometry is encoded: the triangles written (the encoders
 * drop triangles that collapsed on their grid) and the share of the simplifier's input they are.
 */
export function settleSimplifyDetails(details: Record<string, unknown>, doc: Document): void {
  const simplify = details.simplify as { triangles_before: number; triangles_after: number } | undefined
  if (!simplify) return
  simplify.triangles_after = countMeshTriangles(doc)
  Object.assign(simplify, { ratio: simplify.triangles_before > 0 ? simplify.triangles_after / simplify.triangles_before : 1 })
}

/**
 * Completes the merge details once the geometry is encoded: the nodes and draw calls of the file
 * written, not of the scene right after the merge. Compress's encoding joins more primitives of one
 * mesh (joinMeshPrimitives: spider.obj's zip, merged into one mesh of 12 primitives, is written with 4
 * draw calls) and prunes nodes left empty; a report of the merge's moment said 12.
 */
export function settleMergeDetails(details: Record<string, unknown>, doc: Document): void {
  const merge = details.merge as MergeReport | undefined
  if (!merge) return
  const after = sceneCounts(doc)
  Object.assign(merge, { nodes_after: after.nodes, draw_calls_after: after.drawCalls })
}
