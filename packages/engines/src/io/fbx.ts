import type { Document } from '@gltf-transform/core'
import type { Platform } from '../platform.ts'
import { readWithAssimp, type AssimpReadOptions } from './assimp-read.ts'

/**
 * Reads an FBX file (binary or ASCII, any version assimp 5.2 reads) into a Document. Textures
 * embedded in the file come along; those it references by path come from `options.resources`.
 */
export function readFbx(platform: Platform, bytes: Uint8Array, options: AssimpReadOptions = {}): Promise<Document> {
  return readWithAssimp(platform, bytes, 'fbx', options)
}
