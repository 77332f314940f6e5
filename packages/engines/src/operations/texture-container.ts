import type { Transform } from '@gltf-transform/core'
import { writableFormats, writeModel } from '../io/index.ts'
import { leftAsItWasNote, summarizeTextures, type TextureReport } from '../ops/texture-report.ts'
import { modelOutput, type OperationContext, type OperationInput, type OperationOutput } from './operation.ts'

/**
 * Texture jobs answer in the input's own container: its format where that can be written (gltf →
 * zip), a zip bundle (OBJ and its textures, say) as a glTF zip so the new images travel with it,
 * and anything else as GLB.
 */
export function sameContainer(format: string): string {
  const writable = writableFormats()
  if (writable.includes(format)) return format
  if (format === 'zip' && writable.includes('gltf')) return 'gltf'
  return 'glb'
}

/**
 * The model half of a texture operation: reads the model, runs the texture transform (which fills
 * the report and the notes it is given), and writes the model back in its own container with the
 * report summarized and the notes in `details.notes`, with each texture the transform skipped and why.
 */
export async function retextureModel(
  context: OperationContext,
  input: OperationInput,
  progressAfterRead: number,
  transform: (report: TextureReport[], notes: string[]) => Transform,
): Promise<OperationOutput> {
  const doc = await context.readModel(input.bytes)
  context.report(progressAfterRead)
  const textures: TextureReport[] = []
  const notes: string[] = []
  await doc.transform(transform(textures, notes))
  for (const texture of textures) if (texture.skipped) notes.push(leftAsItWasNote(texture.name, texture.skipped))
  context.report(85)
  const written = await writeModel(context.platform, doc, sameContainer(input.format))
  return modelOutput(written, summarizeTextures(textures), notes)
}
