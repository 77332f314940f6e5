import { startHttpFloor, type HttpFloor } from './http-floor.ts'
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
  /** The same HTTP exchange against a server that only stores the upload (http-floor.ts). */
  floorMs: number
  /** (library + floor) ÷ library: the least ratio a service that stores uploads should expect here. */
  floorRatio: number
  outputBytes: number
  /** Medians of the parts of the service time (the rest: queueing, waiting, record writes). */
  uploadMs: number
  processingMs: number
  downloadMs: number
}

/**
 * A pause between measurements: each side's garbage collection and the disk's write-back of
 * its files run after it has answered, and on two cores they slowed the other side's next run (the
 * 27 MB upload took 110–140 ms right after a library call, 35–50 ms on a quiet machine).
 */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 300))
}

/**
 * End-to-end time of the warm service (upload → long poll → download) against the same library call
 * made in a warm process of its own (library-runner.ts), and against the same HTTP exchange with a
 * server that only stores the upload (http-floor.ts), medians of `runs` after warm-ups.
 */
export async function measureOverhead(service: BenchService, inputs: Input[], runs: number): Promise<OverheadRow[]> {
  const [library, floor] = await Promise.all([startLibraryRunner(), startHttpFloor()])
  try {
    const rows: OverheadRow[] = []
    for (const input of inputs) {
      for (const engine of ['draco', 'meshopt'] as const) rows.push(await measureOne(service, library, floor, input, engine, runs))
    }
    return rows
  } finally {
    library.stop()
    floor.stop()
  }
}

async function measureOne(
  service: BenchService,
  library: LibraryRunner,
  floor: HttpFloor,
  input: Input,
  engine: 'draco' | 'meshopt',
  runs: number,
): Promise<OverheadRow> {
  // Two warm-ups: the pool has two threads, and each JIT-compiles the codecs' callers on first use.
  let warm: RoundTrip | undefined
  for (let i = 0; i < 2; i++) warm = await roundTrip(service, input, { engine })
  const resultBytes = warm!.bytes.byteLength
  await library.compress(input, engine)
  await floor.trip(input, { engine }, resultBytes)
  const trips: RoundTrip[] = []
  const libraryTimes: number[] = []
  const floorTimes: number[] = []
  // Small inputs are cheap to repeat; a large one still gets enough runs for a median that holds.
  const count = input.bytes.byteLength < 8 * 2 ** 20 ? runs * 2 : runs + 2
  const viaService = async () => void trips.push(await roundTrip(service, input, { engine }))
  const viaLibrary = async () => void libraryTimes.push(await library.compress(input, engine))
  const viaFloor = async () => void floorTimes.push(await floor.trip(input, { engine }, resultBytes))
  for (let i = 0; i < count; i++) {
    // The library call's garbage and written file slow whatever runs next: the service and the floor
    // take turns there.
    for (const measure of i % 2 === 0 ? [viaService, viaLibrary, viaFloor] : [viaFloor, viaLibrary, viaService]) {
      await settle()
      await measure()
    }
  }
  const serviceMs = median(trips.map((t) => t.ms))
  const libraryMs = median(libraryTimes)
  const floorMs = median(floorTimes)
  return {
    input: input.name,
    engine,
    inputBytes: input.bytes.byteLength,
    serviceMs,
    libraryMs,
    ratio: serviceMs / libraryMs,
    floorMs,
    floorRatio: (libraryMs + floorMs) / libraryMs,
    outputBytes: resultBytes,
    uploadMs: median(trips.map((t) => t.uploadMs)),
    processingMs: median(trips.map((t) => t.processingMs)),
    downloadMs: median(trips.map((t) => t.downloadMs)),
  }
}
