import { z } from 'zod'
import { writeModel } from '../io/index.ts'
import { compress, COMPRESS_DEFAULTS } from '../ops/compress.ts'
import { defineOperation, modelOutput } from './operation.ts'

const bits = (min: number, max: number) => z.number().int().min(min).max(max).optional()

/** compress: any readable model → GLB with Draco or meshopt geometry (contract 4.3; its option names). */
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
  }),
  defaults: COMPRESS_DEFAULTS,
  inputs: 'models',
  async run(context, input, options) {
    context.report(5)
    const doc = await context.readModel(input.bytes)
    context.report(30)
    await doc.transform(compress({ ...options, meshoptEncoder: context.platform.meshoptEncoder }))
    context.report(85)
    const written = await writeModel(context.platform, doc, 'glb')
    context.report(95)
    return modelOutput(written)
  },
})
