import { fail } from '../check.ts'
import { expect } from '../assert.ts'
import { readGlbJson, uncompressedPrimitives } from './glb-json.ts'
import { inspectGlb, type ModelFacts } from './model.ts'

/** The extension each engine's result is declared with, by default. */
const COMPRESSION_EXTENSION = { draco: 'KHR_draco_mesh_compression', meshopt: 'EXT_meshopt_compression' } as const

/** What a compress result is stored with: its engine, and for meshopt the extension (a Mos server's `meshopt_extension=khr`: KHR_). */
export type Compression = (typeof COMPRESSION_EXTENSION)[keyof typeof COMPRESSION_EXTENSION] | 'KHR_meshopt_compression'

/** The extension a compress request's fields ask the result to be stored with. */
export function compressionAsked(fields: Record<string, unknown>): Compression {
  if (fields.engine !== 'meshopt') return COMPRESSION_EXTENSION.draco
  return String(fields.meshopt_extension).toLowerCase() === 'khr' ? 'KHR_meshopt_compression' : COMPRESSION_EXTENSION.meshopt
}

/**
 * Fails unless `bytes` is a GLB whose every primitive is stored with the engine's compression (the
 * extension declared used and required) and that decodes; returns the decoded facts.
 */
export async function expectCompressedGlb(bytes: Uint8Array, extension: Compression): Promise<ModelFacts> {
  let json
  try {
    json = readGlbJson(bytes)
  } catch (error) {
    fail(`the result is not a GLB: ${(error as Error).message}`)
  }
  expect(
    json.extensionsUsed?.includes(extension),
    `the result does not declare ${extension} in extensionsUsed (${json.extensionsUsed?.join(', ') || 'none'})`,
  )
  const { total, uncompressed } = uncompressedPrimitives(json, extension)
  expect(total > 0, 'the result holds no mesh primitive')
  expect(uncompressed === 0, `${uncompressed} of ${total} primitives are stored without ${extension}`)
  return inspectGlb(bytes).catch((error: Error) => fail(`the result does not decode: ${error.message}`))
}
