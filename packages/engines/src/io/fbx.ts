import type { Document } from '@gltf-transform/core'
import type { Platform } from '../platform.ts'
import { readWithAssimp, type AssimpReadOptions } from './assimp-read.ts'

/**
 * Reads an FBX file (binary or ASCII, any version assimp 5.2 reads) into a Document. Textures
 * embedded in the file come along; those it references by path are found by `options.resolve` among the
 * upload's files (a zip's entries), matched by base name when the path is the author's disk.
 */
export function readFbx(platform: Platform, bytes: Uint8Array, options: AssimpReadOptions = {}): Promise<Document> {
  return readWithAssimp(platform, bytes, 'fbx', options)
}
