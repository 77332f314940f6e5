import { z } from 'zod'
import { diagnoseBytes } from '../ops/diagnose-file.ts'
import { DIAGNOSE_DEFAULTS } from '../ops/diagnose.ts'
import { defineOperation } from './operation.ts'

/**
 * diagnose: reads a model (never changes the upload) and returns the contract's diagnosis result
 * in `details.result`, and the same result as a JSON file for download (contract 4.6).
 */
export const diagnoseOperation = defineOperation({
  name: 'diagnose',
  options: z.object({ maxTextureSize: z.number().int().positive().optional() }),
  defaults: { maxTextureSize: DIAGNOSE_DEFAULTS.maxTextureSize },
  inputs: 'models',
  outputSize: { kind: 'may-grow', because: 'its result is a JSON report, not the model' },
  async run(context, input, options) {
    context.report(5)
    const result = await diagnoseBytes(context.platform, context.gltfValidator, input.bytes, input.format, {
      ...options,
      ...context.readOptions,
      sharp: context.sharp,
    })
    context.report(95)
    return { bytes: new TextEncoder().encode(`${JSON.stringify(result, null, 2)}\n`), extension: 'json', details: { result } }
  },
})
