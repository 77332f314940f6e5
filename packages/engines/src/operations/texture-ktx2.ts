import { z } from 'zod'
import { isImageExtension } from '../io/image.ts'
import { encodeImageKtx2, TEXTURE_KTX2_DEFAULTS, textureKtx2 } from '../ops/texture-ktx2.ts'
import { TEXTURE_LIMITS, defineOperation } from './operation.ts'
import type { OutputSizeRule } from './output-size.ts'
import { retextureModel } from './texture-container.ts'

/** Why a KTX2 result may be larger than its input: texture_ktx2's rule, and compress's with texture_format=ktx2. */
export const KTX2_MAY_GROW: OutputSizeRule = {
  kind: 'may-grow',
  because: 'KTX2 is the GPU format asked for: it trades file bytes for GPU memory and upload time (docs/textures.md)',
}

/** texture_ktx2: every texture of a model (or a standalone image) encoded to KTX2 with Basis Universal (contract 4.8). */
export const textureKtx2Operation = defineOperation({
  name: 'texture_ktx2',
  options: z.object({
    uastc: z.boolean().optional(),
    quality: z.number().int().min(0).max(255).optional(),
    normalMapsUastc: z.boolean().optional(),
    ...TEXTURE_LIMITS,
  }),
  defaults: { uastc: TEXTURE_KTX2_DEFAULTS.uastc, normalMapsUastc: TEXTURE_KTX2_DEFAULTS.normalMapsUastc },
  inputs: 'models-and-images',
  outputSize: KTX2_MAY_GROW,
  async run(context, input, parsed) {
    const options = { ...parsed, encoder: context.sharp, basis: await context.loadBasis() }
    context.report(5)
    if (isImageExtension(input.format)) return encodeImageKtx2(input.bytes, options)
    return retextureModel(context, input, 15, (report, notes) =>
      textureKtx2({ ...options, report, notes, onProgress: (f) => context.report(15 + 70 * f) }),
    )
  },
})
