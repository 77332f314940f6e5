import { compress, loadPlatform, type CompressOptions } from '../packages/engines/src/index.ts'
import { roundTrip, type BenchService } from './service.ts'
import { median, type Input } from './stats.ts'

export interface OverheadRow {
  input: string
  engine: 'draco' | 'meshopt'
  inputBytes: number
  serviceMs: number
  libraryMs: number
  ratio: number
  outputBytes: number
}

// Loaded once, as a worker thread does: the library figure is the call, not the codecs' start-up.
const platformReady = loadPlatform()

/** Library call with the service's default options, in this process. */
async function libraryCompress(bytes: Uint8Array, engine: 'draco' | 'meshopt'): Promise<Uint8Array> {
  const platform = await platformReady
  const doc = await platform.io.readBinary(bytes)
  const options: CompressOptions = { engine, meshoptEncoder: platform.meshoptEncoder }
  await doc.transform(compress(options))
  return platform.io.writeBinary(doc)
}

/**
 * End-to-end time of the warm service (upload → poll → download) against the same library call
 * made in-process, median of `runs` after one warm-up each.
 */
export async function measureOverhead(service: BenchService, inputs: Input[], runs: number): Promise<OverheadRow[]> {
  const rows: OverheadRow[] = []
  for (const input of inputs) {
    for (const engine of ['draco', 'meshopt'] as const) {
      // Two warm-ups: the pool has two threads, and each JIT-compiles the codecs' callers on first use.
      for (let i = 0; i < 2; i++) await roundTrip(service, input, { engine })
      await libraryCompress(input.bytes, engine)
      const serviceTimes: number[] = []
      const libraryTimes: number[] = []
      let outputBytes = 0
      const count = input.bytes.byteLength < 8 * 2 ** 20 ? runs * 2 : runs
      for (let i = 0; i < count; i++) {
        const result = await roundTrip(service, input, { engine })
        serviceTimes.push(result.ms)
        outputBytes = result.bytes.byteLength
        const t = performance.now()
        await libraryCompress(input.bytes, engine)
        libraryTimes.push(performance.now() - t)
      }
      const serviceMs = median(serviceTimes)
      const libraryMs = median(libraryTimes)
      rows.push({ input: input.name, engine, inputBytes: input.bytes.byteLength, serviceMs, libraryMs, ratio: serviceMs / libraryMs, outputBytes })
    }
  }
  return rows
}
