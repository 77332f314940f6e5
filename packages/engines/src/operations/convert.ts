import { z } from 'zod'
import { checkConvertible, parseConvertOptions, writeConverted } from '../ops/convert.ts'
import { optimizeScene, SCENE_OPTIONS, settleMergeDetails, settleSimplifyDetails, splitSceneOptions } from '../ops/optimize-scene.ts'
import { texturesTargetWrites } from '../io/target-holds.ts'
import { recodeTexturesLosslessly } from '../ops/lossless-textures.ts'
import { MEANINGFUL_PNG_CHUNKS } from '../ops/png-repack.ts'
import { defineOperation, modelOutput } from './operation.ts'

/**
 * The targets whose readers ignore a PNG's colour-space and text chunks, as glTF tells them to: their
 * PNGs are re-packed whatever they carry. The other targets' readers (OBJ's, FBX's, COLLADA's, USDZ's
 * images) may honour them, so a PNG carrying one goes as it came (MEANINGFUL_PNG_CHUNKS).
 */
const GLTF_TARGETS = new Set(['glb', 'gltf'])

/**
 * convert: any readable model → `target_format` (glb, gltf as a zip, obj, stl, ply, ...) (contract 4.4),
 * after the scene steps Mos's extension fields ask for (simplify, texture resize, merge: compress's,
 * docs/api.md); without them the model is written as read, its PNG and JPEG textures in the smallest
 * coding of their pixels.
 */
export const convertOperation = defineOperation({
  name: 'convert',
  // Which targets exist is the format layer's to say (writers registered now): checked in `run`.
  options: z.object({
    target_format: z.string({ error: 'convert needs a target_format' }).min(1, 'convert needs a target_format'),
    ...SCENE_OPTIONS.omit({ instance: true, palette: true }).shape,
  }),
  defaults: {},
  inputs: 'models',
  outputSize: { kind: 'may-grow', because: 'the target format asked for may be less compact (OBJ and ASCII PLY are text)' },
  async run(context, input, options) {
    const { target_format } = parseConvertOptions(options)
    const { scene } = splitSceneOptions(options)
    context.report(5)
    const doc = await context.readModel(input.bytes)
    context.report(30)
    // The scene steps see only geometry convert accepts.
    checkConvertible(doc, target_format)
    const notes: string[] = []
    const resources = { simplifier: context.platform.meshoptSimplifier, sharp: context.sharp, imageThreads: context.imageThreads, notes }
    const details = await optimizeScene(doc, scene, resources)
    // What the target holds is what the steps left: convert writes every triangle it is given.
    settleSimplifyDetails(details, doc)
    settleMergeDetails(details, doc)
    context.report(60)
    // The same pixels in fewer bytes, as compress writes them: the JPEGs' coefficients and every other segment are kept.
    const keepPngsWith = GLTF_TARGETS.has(target_format) ? undefined : MEANINGFUL_PNG_CHUNKS
    const only = texturesTargetWrites(doc, target_format)
    const repacked = await recodeTexturesLosslessly(doc, { sharp: context.sharp, imageThreads: context.imageThreads, keepPngsWith, only })
    if (repacked.length > 0) details.textures_repacked = repacked
    const written = await writeConverted(context.platform, doc, target_format)
    context.report(95)
    return modelOutput(written, details, notes)
  },
})
