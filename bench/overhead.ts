import { startLibraryRunner, type LibraryRunner } from './library.ts'
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

/**
 * End-to-end time of the warm service (upload → poll → download) against the same library call
 * made in a warm process of its own (library-runner.ts), median of `runs` after warm-ups.
 */
export async function measureOverhead(service: BenchService, inputs: Input[], runs: number): Promise<OverheadRow[]> {
  const library = await startLibraryRunner()
  try {
    const rows: OverheadRow[] = []
    for (const input of inputs) {
      for (const engine of ['draco', 'meshopt'] as const) rows.push(await measureOne(service, library, input, engine, runs))
    }
    return rows
  } finally {
    library.stop()
  }
}

async function measureOne(service: BenchService, library: LibraryRunner, input: Input, engine: 'draco' | 'meshopt', runs: number): Promise<OverheadRow> {
  // Two warm-ups: the pool has two threads, and each JIT-compiles the codecs' callers on first use.
  for (let i = 0; i < 2; i++) await roundTrip(service, input, { engine })
  await library.compress(input, engine)
  const serviceTimes: number[] = []
  const libraryTimes: number[] = []
  let outputBytes = 0
  const count = input.bytes.byteLength < 8 * 2 ** 20 ? runs * 2 : runs
  for (let i = 0; i < count; i++) {
    const result = await roundTrip(service, input, { engine })
    serviceTimes.push(result.ms)
    outputBytes = result.bytes.byteLength
    libraryTimes.push(await library.compress(input, engine))
  }
  const serviceMs = median(serviceTimes)
  const libraryMs = median(libraryTimes)
  return { input: input.name, engine, inputBytes: input.bytes.byteLength, serviceMs, libraryMs, ratio: serviceMs / libraryMs, outputBytes }
}
