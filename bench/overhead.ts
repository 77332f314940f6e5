import { startLibraryRunner, type LibraryRunner } from './library.ts'
import { roundTrip, type BenchService, type RoundTrip } from './service.ts'
import { median, type Input } from './stats.ts'

export interface OverheadRow {
  input: string
  engine: 'draco' | 'meshopt'
  inputBytes: number
  serviceMs: number
  libraryMs: number
  ratio: number
  outputBytes: number
  /** Medians of the parts of the service time (the rest: queueing, polling, record writes). */
  uploadMs: number
  processingMs: number
  downloadMs: number
}

/**
 * A pause between the two measurements: each side's garbage collection and the disk's write-back of
 * its files run after it has answered, and on two cores they slowed the other side's next run (the
 * 27 MB upload took 110–140 ms right after a library call, 35–50 ms on a quiet machine).
 */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 300))
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
  const trips: RoundTrip[] = []
  const libraryTimes: number[] = []
  // Small inputs are cheap to repeat; a large one still gets enough runs for a median that holds.
  const count = input.bytes.byteLength < 8 * 2 ** 20 ? runs * 2 : runs + 2
  for (let i = 0; i < count; i++) {
    await settle()
    trips.push(await roundTrip(service, input, { engine }))
    await settle()
    libraryTimes.push(await library.compress(input, engine))
  }
  const serviceMs = median(trips.map((t) => t.ms))
  const libraryMs = median(libraryTimes)
  return {
    input: input.name,
    engine,
    inputBytes: input.bytes.byteLength,
    serviceMs,
    libraryMs,
    ratio: serviceMs / libraryMs,
    outputBytes: trips[0]!.bytes.byteLength,
    uploadMs: median(trips.map((t) => t.uploadMs)),
    processingMs: median(trips.map((t) => t.processingMs)),
    downloadMs: median(trips.map((t) => t.downloadMs)),
  }
}
