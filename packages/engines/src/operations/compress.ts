import { z } from 'zod'
import { glbChunkLengths } from '../io/gltf.ts'
import { writeModel } from '../io/index.ts'
import { compress, COMPRESS_DEFAULTS, storedTexcoordBits } from '../ops/compress.ts'
import { optimizeScene, SCENE_OPTIONS, settleMergeDetails, settleSimplifyDetails, splitSceneOptions } from '../ops/optimize-scene.ts'
import { summarizeTextures, type TextureReport } from '../ops/texture-report.ts'
import type { ResizedPixels } from '../ops/resized-pixels.ts'
import { defineOperation, modelOutput, TEXTURE_LIMITS } from './operation.ts'
import { KTX2_MAY_GROW } from './texture-ktx2.ts'

/**
 * Why a meshopt result of a Draco input can be larger than that input, and what keeps it smaller:
 * Draco's edgebreaker and parallelogram prediction code a dense mesh in fewer bytes than meshopt's
 * codec can (DenseSphere.glb: Draco 49 212 B; meshopt 92 244 B, gltfpack -cc 92 240 B on the decoded file).
 */
const dracoToMeshoptNote =
  'the input was Draco-compressed, and Draco codes this geometry smaller than meshopt can: the meshopt result asked for is larger than the input (engine=draco keeps it smaller)'

/**
 * Why a compress result of a small GLB can be larger than it with nothing to fix in the encoding: the
 * JSON that declares the compression (meshopt's extension on each buffer view and its fallback
 * buffer, Draco's on each primitive, the quantization's node transforms) costs more than the binary
 * data saves (Mesh_PrimitiveMode_01.gltf, 588 B of lines: 1 184 B with meshopt, gltfpack -cc 1 244).
 * Measured on the two files' chunks; undefined where the binary data did not shrink.
 */
function jsonOutweighsNote(input: Uint8Array, output: Uint8Array): string | undefined {
  const before = glbChunkLengths(input)
  const after = glbChunkLengths(output)
  if (!before || !after || after.bin >= before.bin || after.json <= before.json) return undefined
  return `the result is larger than the input by its JSON alone: the binary data went from ${before.bin} to ${after.bin} B, and the JSON that declares the compression from ${before.json} to ${after.json} B, more than the encoding saves on a file this small`
}

const bits = (min: number, max: number) => z.number().int().min(min).max(max).optional()

/**
 * compress: any readable model → GLB with Draco or meshopt geometry (contract 4.3; its option names),
 * after the scene steps Mos's extension fields ask for (simplify, resize, merge, instance; `preset`
 * is expanded into them by the contract's parser and arrives as the fields it sets).
 */
export const compressOperation = defineOperation({
  name: 'compress',
  options: z.object({
    engine: z.enum(['draco', 'meshopt']),
    level: z.number().int().min(0).max(10).optional(),
    position_quantization_bits: bits(1, 30),
    normal_quantization_bits: bits(1, 30),
    texcoord_quantization_bits: bits(1, 30),
    color_quantization_bits: bits(1, 30),
    generic_quantization_bits: bits(1, 30),
    meshopt_compression_level: z.enum(['high', 'medium', 'low']).optional(),
    meshopt_extension: z.enum(['ext', 'khr']).optional(),
    texture_progressive_jpeg: z.boolean().optional(),
    texture_format: z.enum(['webp', 'jpeg', 'png', 'ktx2']).optional(),
    texture_quality: z.number().int().min(1).max(100).optional(),
    lossy_normal_maps: z.boolean().optional(),
    // The tier's per-image limits, for the textures texture_format re-encodes (the server adds them to jobs that take them).
    ...TEXTURE_LIMITS,
    // Expanded by the contract's parser into the fields it sets (which arrive beside it); kept as sent.
    preset: z.enum(['web', 'mobile', 'archive']).optional(),
    ...SCENE_OPTIONS.shape,
  }),
  defaults: COMPRESS_DEFAULTS,
  inputs: 'models',
  // Level 0 (variant B) asks for no compression: the model re-packed as GLB, which may be larger; so
  // may KTX2 textures, which trade file bytes for GPU memory (ClearCoatTest: 1.07 MB with UASTC normal maps).
  outputSize: (options) =>
    options.level === 0
      ? { kind: 'may-grow', because: 'level 0 asks for no compression' }
      : options.texture_format === 'ktx2'
        ? KTX2_MAY_GROW
        : {
            kind: 'report-larger',
            because:
              'since the input lacks the encoding asked for (the task’s notes say why it came out larger; where they do not, that is a defect of Mos to report)',
          },
  async run(context, input, options) {
    context.report(5)
    const doc = await context.readModel(input.bytes)
    const dracoInput = doc
      .getRoot()
      .listExtensionsUsed()
      .some((extension) => extension.extensionName === 'KHR_draco_mesh_compression')
    context.report(20)
    const { preset: _expanded, ...fields } = options
    const { scene, encoding } = splitSceneOptions(fields)
    // Resized textures are bounded by the default pixel limit; the tier's texture size limit is the texture operations'.
    const notes: string[] = []
    const texcoordBits = storedTexcoordBits(fields)
    // With texture_format, a texture the resize encodes lossily is encoded once more from its resized
    // pixels, not from that coding (docs/textures.md).
    const resizedPixels: ResizedPixels | undefined = fields.texture_format ? new Map() : undefined
    const resources = {
      simplifier: context.platform.meshoptSimplifier,
      sharp: context.sharp,
      imageThreads: context.imageThreads,
      notes,
      texcoordBits,
      resizedPixels,
    }
    const details = await optimizeScene(doc, scene, resources)
    context.report(40)
    const repacked: TextureReport[] = []
    const reencoded: TextureReport[] = []
    const { meshoptEncoder } = context.platform
    const basis = fields.texture_format === 'ktx2' ? await context.loadBasis() : undefined
    const { sharp, imageThreads } = context
    await doc.transform(compress({ ...encoding, meshoptEncoder, notes, sharp, imageThreads, repacked, reencoded, basis, resizedPixels }))
    settleSimplifyDetails(details, doc)
    settleMergeDetails(details, doc)
    if (repacked.length > 0) details.textures_repacked = repacked
    // texture_format's re-encoding, reported as the texture operations report theirs.
    if (fields.texture_format) Object.assign(details, summarizeTextures(reencoded))
    context.report(85)
    const written = await writeModel(context.platform, doc, 'glb')
    if (written.bytes.byteLength > input.bytes.byteLength) {
      if (dracoInput && options.engine === 'meshopt') notes.push(dracoToMeshoptNote)
      else {
        const why = jsonOutweighsNote(input.bytes, written.bytes)
        if (why) notes.push(why)
      }
    }
    context.report(95)
    return modelOutput(written, details, notes)
  },
})
