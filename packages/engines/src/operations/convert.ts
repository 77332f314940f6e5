import { z } from 'zod'
import { convertDocument, parseConvertOptions } from '../ops/convert.ts'
import { defineOperation, modelOutput } from './operation.ts'

/** convert: any readable model → `target_format` (glb, gltf as a zip, obj, stl, ply, ...) (contract 4.4). */
export const convertOperation = defineOperation({
  name: 'convert',
  // Which targets exist is the format layer's to say (writers registered now): checked in `run`.
  options: z.object({ target_format: z.string({ error: 'convert needs a target_format' }).min(1, 'convert needs a target_format') }),
  defaults: {},
  inputs: 'models',
  outputSize: { kind: 'may-grow', because: 'the target format asked for may be less compact (OBJ and ASCII PLY are text)' },
  async run(context, input, options) {
    const { target_format } = parseConvertOptions(options)
    context.report(5)
    const doc = await context.readModel(input.bytes)
    context.report(50)
    const written = await convertDocument(context.platform, doc, target_format)
    context.report(95)
    return modelOutput(written)
  },
})
