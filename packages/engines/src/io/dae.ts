import type { Document } from '@gltf-transform/core'
import type { Platform } from '../platform.ts'
import { readWithAssimp, type AssimpReadOptions } from './assimp-read.ts'

/**
 * Reads a COLLADA (.dae) file into a Document. COLLADA only references its textures (`<init_from>`):
 * `options.resolve` finds them among the upload's files (a zip's entries); those it does not find are
 * dropped with a note naming them.
 */
export function readDae(platform: Platform, bytes: Uint8Array, options: AssimpReadOptions = {}): Promise<Document> {
  return readWithAssimp(platform, bytes, 'dae', options)
}
