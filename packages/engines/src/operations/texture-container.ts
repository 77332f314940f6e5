import { writableFormats } from '../io/index.ts'

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
