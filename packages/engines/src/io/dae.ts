import type { Document } from '@gltf-transform/core'
import type { Platform } from '../platform.ts'
import { readWithAssimp, type AssimpReadOptions } from './assimp-read.ts'

/**
 * Reads a COLLADA (.dae) file into a Document. COLLADA only references its textures: pass them in
 * `options.resources` (e.g. the other entries of an uploaded zip), or the textures are dropped.
 */
export function readDae(platform: Platform, bytes: Uint8Array, options: AssimpReadOptions = {}): Promise<Document> {
  return readWithAssimp(platform, bytes, 'dae', options)
}
