import { EXTMeshoptCompression } from '@gltf-transform/extensions'
import { compress, loadPlatform } from '../packages/engines/src/index.ts'
import type { Input } from './stats.ts'

type Step = 'encodeOnly' | 'reorder' | 'quantize' | 'filters'

export interface MeshoptStepsRow {
  input: string
  /** Output bytes after each step, each including the ones before it. */
  encodeOnly: number
  reorder: number
  quantize: number
  filters: number
  /** Milliseconds to read, transform and write, each step including the ones before it (best of `runs`). */
  ms: Record<Step, number>
}

const LEVELS: [Step, 'low' | 'medium' | 'high' | undefined][] = [
  ['encodeOnly', undefined],
  ['reorder', 'low'],
  ['quantize', 'medium'],
  ['filters', 'high'],
]

/**
 * What each step of the meshopt pipeline is worth, in bytes and in time: the codec alone on the
 * input as it is, then with the vertex/index reordering (`meshopt_compression_level=low`), then with
 * quantization on gltfpack's grid (`medium`), then with meshopt's filters (`high`, the default).
 * The time differences say where a job's time goes; run in this process, warm, best of `runs`.
 */
export async function measureMeshoptSteps(inputs: Input[], runs = 5): Promise<MeshoptStepsRow[]> {
  const platform = await loadPlatform()
  const encoded = async (bytes: Uint8Array, level?: 'low' | 'medium' | 'high') => {
    const start = performance.now()
    const doc = await platform.io.readBinary(bytes)
    if (level)
      await doc.transform(compress({ engine: 'meshopt', meshopt_compression_level: level, meshoptEncoder: platform.meshoptEncoder }))
    else
      doc
        .createExtension(EXTMeshoptCompression)
        .setRequired(true)
        .setEncoderOptions({ method: EXTMeshoptCompression.EncoderMethod.QUANTIZE })
    const size = (await platform.io.writeBinary(doc)).byteLength
    return { size, ms: performance.now() - start }
  }
  const rows: MeshoptStepsRow[] = []
  for (const input of inputs) {
    const row = { input: input.name, ms: {} } as MeshoptStepsRow
    for (const [step, level] of LEVELS) {
      await encoded(input.bytes, level) // warm
      let best = Infinity
      for (let run = 0; run < runs; run++) {
        const { size, ms } = await encoded(input.bytes, level)
        row[step] = size
        best = Math.min(best, ms)
      }
      row.ms[step] = best
    }
    rows.push(row)
  }
  return rows
}
