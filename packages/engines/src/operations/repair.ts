import { z } from 'zod'
import { FORMAT_CODECS, writeModel } from '../io/index.ts'
import { refuseUnreadableGltf } from '../ops/diagnose-file.ts'
import { repairDocument } from '../ops/repair.ts'
import { defineOperation, modelOutput } from './operation.ts'

/**
 * repair: fixes a model's defects and writes it back in its own format (gltf → zip; a format
 * without a writer comes back as glb, said in `details.output_format`). `details.repairs` counts
 * what was fixed (names in docs/repair.md). Contract 4.5: no options.
 */
export const repairOperation = defineOperation({
  name: 'repair',
  options: z.object({}),
  defaults: {},
  inputs: 'models',
  outputSize: { kind: 'report-larger', because: 'since repairs may add what the model lacked (normals, tangents)' },
  async run(context, input) {
    context.report(5)
    const doc = await context.readModel(input.bytes)
    await refuseUnreadableGltf(context.gltfValidator, input.bytes, input.format)
    context.report(30)
    const repairs = await repairDocument(doc)
    context.report(80)
    const format = FORMAT_CODECS[input.format]?.write ? input.format : 'glb'
    const written = await writeModel(context.platform, doc, format)
    context.report(95)
    const note =
      format === input.format ? {} : { output_format: format, output_format_note: `no ${input.format} writer: written as ${format}` }
    return modelOutput(written, { repairs, ...note })
  },
})
