import { z } from 'zod'
import { isImageExtension } from '../io/image.ts'
import { optimizeImage, TEXTURE_OPTIMIZE_DEFAULTS, textureOptimize } from '../ops/texture-optimize.ts'
import { TEXTURE_LIMITS, defineOperation } from './operation.ts'
import { retextureModel } from './texture-container.ts'

/** texture_optimize: every texture of a model (or a standalone image) re-encoded to JPEG, WebP or PNG (contract 4.7). */
export const textureOptimizeOperation = defineOperation({
  name: 'texture_optimize',
  options: z.object({
    // The transform's own wording (ops/texture-optimize.ts), so a bad format reads the same wherever it is caught.
    format: z.enum(['jpeg', 'webp', 'png'], { error: (issue) => `texture format must be jpeg, webp or png, not ${String(issue.input)}` }),
    quality: z.number().int().min(1).max(100).optional(),
    lossy_normal_maps: z.boolean().optional(),
    ...TEXTURE_LIMITS,
  }),
  defaults: { lossy_normal_maps: TEXTURE_OPTIMIZE_DEFAULTS.lossyNormalMaps },
  inputs: 'models-and-images',
  outputSize: { kind: 'never-larger' },
  async run(context, input, parsed) {
    const { lossy_normal_maps, ...rest } = parsed
    const options = { ...rest, lossyNormalMaps: lossy_normal_maps, encoder: context.sharp, concurrency: context.imageThreads }
    context.report(5)
    if (isImageExtension(input.format)) return optimizeImage(input.bytes, options)
    return retextureModel(context, input, 20, (report) => textureOptimize({ ...options, report }))
  },
})
