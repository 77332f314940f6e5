import { fail } from '../check.ts'
import { expect } from '../assert.ts'
import { readGlbJson, uncompressedPrimitives } from './glb-json.ts'
import { inspectGlb, type ModelFacts } from './model.ts'

const EXTENSION = { draco: 'KHR_draco_mesh_compression', meshopt: 'EXT_meshopt_compression' } as const

/**
 * Fails unless `bytes` is a GLB whose every primitive is stored with the engine's compression (the
 * extension declared used and required) and that decodes; returns the decoded facts.
 */
export async function expectCompressedGlb(bytes: Uint8Array, engine: 'draco' | 'meshopt'): Promise<ModelFacts> {
  let json
  try {
    json = readGlbJson(bytes)
  } catch (error) {
    fail(`the result is not a GLB: ${(error as Error).message}`)
  }
  const extension = EXTENSION[engine]
  expect(
    json.extensionsUsed?.includes(extension),
    `the result does not declare ${extension} in extensionsUsed (${json.extensionsUsed?.join(', ') || 'none'})`,
  )
  const { total, uncompressed } = uncompressedPrimitives(json, engine)
  expect(total > 0, 'the result holds no mesh primitive')
  expect(uncompressed === 0, `${uncompressed} of ${total} primitives are stored without ${extension}`)
  return inspectGlb(bytes).catch((error: Error) => fail(`the result does not decode: ${error.message}`))
}
