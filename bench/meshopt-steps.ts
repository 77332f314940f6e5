import { EXTMeshoptCompression } from '@gltf-transform/extensions'
import { compress, loadPlatform } from '../packages/engines/src/index.ts'
import type { Input } from './stats.ts'

export interface MeshoptStepsRow {
  input: string
  /** Output bytes after each step, each including the ones before it. */
  encodeOnly: number
  reorder: number
  quantize: number
  filters: number
}

/**
 * What each step of the meshopt pipeline is worth: the codec alone on the input as it is, then with
 * the vertex/index reordering (`meshopt_compression_level=low`), then with quantization on
 * gltfpack's grid (`medium`), then with meshopt's filters (`high`, the default).
 */
export async function measureMeshoptSteps(inputs: Input[]): Promise<MeshoptStepsRow[]> {
  const platform = await loadPlatform()
  const encoded = async (bytes: Uint8Array, level?: 'low' | 'medium' | 'high') => {
    const doc = await platform.io.readBinary(bytes)
    if (level) await doc.transform(compress({ engine: 'meshopt', meshoptLevel: level, meshoptEncoder: platform.meshoptEncoder }))
    else doc.createExtension(EXTMeshoptCompression).setRequired(true).setEncoderOptions({ method: EXTMeshoptCompression.EncoderMethod.QUANTIZE })
    return (await platform.io.writeBinary(doc)).byteLength
  }
  const rows: MeshoptStepsRow[] = []
  for (const input of inputs) {
    rows.push({
      input: input.name,
      encodeOnly: await encoded(input.bytes),
      reorder: await encoded(input.bytes, 'low'),
      quantize: await encoded(input.bytes, 'medium'),
      filters: await encoded(input.bytes, 'high'),
    })
  }
  return rows
}
