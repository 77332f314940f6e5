import { z } from 'zod'
import { writeModel } from '../io/index.ts'
import { isImageExtension } from '../io/image.ts'
import { encodeImageKtx2, TEXTURE_KTX2_DEFAULTS, textureKtx2 } from '../ops/texture-ktx2.ts'
import { summarizeTextures, type TextureReport } from '../ops/texture-report.ts'
import { TEXTURE_LIMITS, defineOperation } from './operation.ts'
import { sameContainer } from './texture-container.ts'

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
  async run(context, input, parsed) {
    const options = { ...parsed, encoder: context.sharp, basis: await context.loadBasis() }
    context.report(5)
    if (isImageExtension(input.format)) return encodeImageKtx2(input.bytes, options)
    const doc = await context.readModel(input.bytes)
    context.report(15)
    const textures: TextureReport[] = []
    await doc.transform(textureKtx2({ ...options, report: textures, onProgress: (f) => context.report(15 + 75 * f) }))
    const written = await writeModel(context.platform, doc, sameContainer(input.format))
    return { ...written, details: summarizeTextures(textures) }
  },
})
