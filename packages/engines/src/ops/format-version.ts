import type { Document } from '@gltf-transform/core'
import { isGltf1 } from '../io/gltf1.ts'

/**
 * The version of the format as the file declares it, read from the first bytes: glTF's
 * `asset.version`, "binary"/"ascii" for STL, PLY's `format` line, FBX's binary header version
 * ("7.4"), COLLADA's `version` attribute. Empty when the format has no version (OBJ) or the header
 * does not say.
 */
export function formatVersion(format: string, bytes: Uint8Array, doc: Document): string {
  const head = new TextDecoder('latin1').decode(bytes.subarray(0, 4096))
  switch (format) {
    case 'glb':
    case 'gltf':
      // A glTF 1.0 file is read into a 2.0 document (gltf1.ts): the version is the file's.
      return isGltf1(bytes) ? '1.0' : (doc.getRoot().getAsset().version ?? '')
    case 'stl':
      // An ASCII STL starts with "solid" and has a facet line; binary ones may start with "solid" too.
      return /^\s*solid[^\n]*\n\s*(facet|endsolid)/.test(head) ? 'ascii' : 'binary'
    case 'ply':
      return /^format\s+(\S+)\s+(\S+)/m.exec(head)?.slice(1).reverse().join(' ') ?? ''
    case 'fbx': {
      if (head.startsWith('Kaydara FBX Binary') && bytes.byteLength >= 27) {
        const version = new DataView(bytes.buffer, bytes.byteOffset).getUint32(23, true)
        return `${Math.floor(version / 1000)}.${Math.floor((version % 1000) / 100)}`
      }
      const ascii = /FBXVersion:\s*(\d+)/.exec(head)
      return ascii ? `${Math.floor(Number(ascii[1]) / 1000)}.${Math.floor((Number(ascii[1]) % 1000) / 100)}` : ''
    }
    case 'dae':
      return /<COLLADA[^>]*\sversion\s*=\s*"([^"]+)"/.exec(head)?.[1] ?? ''
    default:
      return ''
  }
}
