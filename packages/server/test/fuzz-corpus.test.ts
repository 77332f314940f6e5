import { existsSync } from 'node:fs'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { corpusFiles } from '../../../test/support/corpus.ts'
import { localServiceEnv, throwAwayLicenceEnv } from '../../../test/support/service-env.ts'
import { FUZZ_OPERATIONS, FUZZ_SEEDS, generateFuzzCorpus, seedPaths, type FuzzCase } from './support/fuzz-corpus.ts'
import { startMos, stopMos, type MosProcess } from './support/processes.ts'
import { API_KEY, fetchMos, waitForTask } from './support/harness.ts'
import { deepJsonGltf, sparseAccessorGlb } from '../../engines/test/support/bombs.ts'

const { available } = corpusFiles(Object.fromEntries(FUZZ_SEEDS.flatMap(seedPaths).map((path, i) => [String(i), path])))

/** FUZZ_SEED and FUZZ_CASES rebuild or widen a run; the defaults are what CI runs (about 2 minutes on 2 cores). */
const SEED = Number(process.env.FUZZ_SEED ?? 17)
const CASES = Number(process.env.FUZZ_CASES ?? 560)
/** Uploads in flight at once: enough to keep both engine threads busy while others upload and poll. */
const CONCURRENCY = 6
/** A case whose task is not over by then is counted as hung (its budget is 20 s plus 10 s per MB). */
const HUNG_AFTER_MS = 60_000

/** What an answer must not carry: stacks, our thread's internals, paths on the server. */
const LEAK =
  /engine thread failed|\n\s+at |\bat .+:\d+:\d+|node_modules|\/work\/|\/tmp\/|\/usr\/|\/home\/|[A-Z]:\\|file:\/\/|\.[cm]?[jt]s:\d+/

type Outcome = { kind: 'clean' | 'crashed' | 'hung' | 'leaked'; detail: string }

describe.skipIf(!available)('fuzz corpus through the real server: every mutated upload ends clean', () => {
  let mos: MosProcess | undefined
  let dataDir: string

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'mos-fuzz-'))
    mos = await startMos('fuzz', {
      ...localServiceEnv({ variant: 'A', dataDir, apiKeys: API_KEY }),
      // More than the trial's 100 files.
      ...throwAwayLicenceEnv('lic_fuzz'),
      SERVICE__ENGINES__PRESTART: 'true',
      // Ended tasks go after about 7 s: the suite then sees the data folder emptied by the service itself.
      SERVICE__TASKS__RETENTION_HOURS: '0.002',
      // A tight budget: a case that makes an engine spin shows up as a budget failure, well before HUNG_AFTER_MS.
      SERVICE__ENGINES__BUDGET_BASE_SECONDS: '20',
      SERVICE__TASKS__TIMEOUT_SECONDS: '120',
    })
  }, 120_000)

  afterAll(async () => {
    await stopMos(mos)
    await rm(dataDir, { recursive: true, force: true })
  })

  const call = (path: string, init: RequestInit = {}) => fetchMos(mos!, path, init)

  /** The error text of a contract error body, or undefined when the body is anything else. */
  const contractError = (body: unknown): string | undefined => {
    if (typeof body !== 'object' || body === null) return undefined
    const keys = Object.keys(body)
    const error = (body as { error?: unknown }).error
    return keys.length === 1 && typeof error === 'string' ? error : undefined
  }

  async function runCase(fuzz: FuzzCase): Promise<Outcome> {
    const form = new FormData()
    form.append('file', new Blob([fuzz.bytes as Uint8Array<ArrayBuffer>]), fuzz.filename)
    for (const [key, value] of Object.entries(fuzz.operation.fields)) form.append(key, value)
    let response: Response
    try {
      response = await call(fuzz.operation.path, { method: 'POST', body: form })
    } catch (error) {
      return { kind: 'crashed', detail: `submit: ${String(error)}` }
    }
    const body = (await response.json().catch(() => undefined)) as { task_id?: string } | undefined
    if (response.status !== 200) {
      const error = contractError(body)
      if (error === undefined) return { kind: 'leaked', detail: `${response.status} not a contract error: ${JSON.stringify(body)}` }
      return LEAK.test(error)
        ? { kind: 'leaked', detail: `${response.status} ${error}` }
        : { kind: 'clean', detail: `refused ${response.status}` }
    }
    const id = body?.task_id
    if (typeof id !== 'string') return { kind: 'leaked', detail: `200 without a task_id: ${JSON.stringify(body)}` }
    const deadline = Date.now() + HUNG_AFTER_MS
    for (;;) {
      let record: { status?: string; error?: unknown }
      try {
        record = (await (await call(`/api/v1/tasks/${id}`)).json()) as typeof record
      } catch (error) {
        return { kind: 'crashed', detail: `poll: ${String(error)}` }
      }
      if (record.status === 'completed') return { kind: 'clean', detail: 'completed' }
      if (record.status === 'failed') {
        const error = typeof record.error === 'string' ? record.error : ''
        if (process.env.FUZZ_VERBOSE) console.log(`${fuzz.label}: ${error}`)
        if (error === '' || LEAK.test(error)) return { kind: 'leaked', detail: `failed with ${JSON.stringify(record.error)}` }
        // An engine failure is about the input; "internal error" is for the service's own faults.
        if (error.startsWith('internal error')) return { kind: 'leaked', detail: `failed with ${error}` }
        return { kind: 'clean', detail: /budget allows/.test(error) ? 'failed at its budget' : 'failed' }
      }
      if (Date.now() > deadline) return { kind: 'hung', detail: `still ${record.status} after ${HUNG_AFTER_MS} ms` }
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  /** Every file under `dir` (recursively); folders the sweep removes while we look are skipped. */
  async function filesUnder(dir: string): Promise<string[]> {
    if (!existsSync(dir)) return []
    const entries = await readdir(dir, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return []
      throw error
    })
    const nested = await Promise.all(
      entries.map((entry) => (entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)])),
    )
    return nested.flat()
  }

  it("the issue's two engine bombs over HTTP fail at once with the input's problem", async () => {
    const cases: [string, Uint8Array, string, RegExp][] = [
      ['/api/v1/diagnose', deepJsonGltf(), 'deep.gltf', /^glTF JSON is nested too deeply/],
      ['/api/v1/convert', deepJsonGltf(), 'deep.gltf', /^glTF JSON is nested too deeply/],
      ['/api/v1/compress', sparseAccessorGlb(), 'sparse.glb', /^invalid glTF: accessor 0's sparse indices need 4000000000 bytes/],
      ['/api/v1/diagnose', sparseAccessorGlb(), 'sparse.glb', /^invalid glTF: accessor 0's sparse indices need 4000000000 bytes/],
    ]
    for (const [path, bytes, name, message] of cases) {
      const form = new FormData()
      form.append('file', new Blob([bytes as Uint8Array<ArrayBuffer>]), name)
      if (path.endsWith('convert')) form.append('target_format', 'glb')
      if (path.endsWith('compress')) form.append('engine', 'draco')
      const started = Date.now()
      const response = await call(path, { method: 'POST', body: form })
      expect(response.status).toBe(200)
      const { task_id: id } = (await response.json()) as { task_id: string }
      const record = await waitForTask(call, id, 15_000)
      expect(record).toMatchObject({ status: 'failed', error: expect.stringMatching(message) })
      expect(Date.now() - started, `${name} on ${path}`).toBeLessThan(15_000)
    }
  }, 120_000)

  it(`runs ${CASES} mutated real files (seed ${SEED}) through every operation: the process lives, each answer is a contract error or an ended task, nothing is left behind`, async () => {
    const cases = generateFuzzCorpus(SEED, CASES)
    expect(cases).toHaveLength(CASES)
    // The issue asks for at least 500 cases; a smaller FUZZ_CASES is for trying a change quickly.
    if (process.env.FUZZ_CASES === undefined) expect(CASES).toBeGreaterThanOrEqual(500)
    const outcomes: (Outcome & { fuzz: FuzzCase; ms: number })[] = []
    let next = 0
    const worker = async () => {
      while (next < cases.length) {
        const fuzz = cases[next++]!
        const t0 = Date.now()
        const outcome = await runCase(fuzz)
        outcomes.push({ ...outcome, fuzz, ms: Date.now() - t0 })
        if (mos!.child.exitCode !== null || mos!.child.signalCode !== null) return
      }
    }
    const started = Date.now()
    await Promise.all(Array.from({ length: CONCURRENCY }, worker))

    const count = (kind: Outcome['kind']) => outcomes.filter((o) => o.kind === kind).length
    const perOperation = FUZZ_OPERATIONS.map((op) => {
      const mine = outcomes.filter((o) => o.fuzz.operation.name === op.name)
      return `${op.name} ${mine.length} (${mine.filter((o) => o.detail === 'completed').length} completed, ${mine.filter((o) => o.detail.startsWith('failed')).length} failed, ${mine.filter((o) => o.detail.startsWith('refused')).length} refused)`
    })
    const exited = mos!.child.exitCode !== null || mos!.child.signalCode !== null
    console.log(
      `fuzz corpus (seed ${SEED}): tried ${outcomes.length} / clean ${count('clean')} / crashed ${count('crashed') + (exited ? 1 : 0)} / hung ${count('hung')} / leaked ${count('leaked')}` +
        ` (${outcomes.filter((o) => o.detail === 'failed at its budget').length} stopped at their work budget)` +
        ` in ${Math.round((Date.now() - started) / 1000)} s\n  ${perOperation.join('\n  ')}`,
    )
    // FUZZ_VERBOSE=1 lists every case with its time and answer, slowest first.
    if (process.env.FUZZ_VERBOSE)
      console.log(
        [...outcomes]
          .sort((a, b) => b.ms - a.ms)
          .map((o) => `${o.ms} ms ${o.kind} ${o.fuzz.label}: ${o.detail}`)
          .join('\n'),
      )
    const bad = outcomes.filter((o) => o.kind !== 'clean').map((o) => `${o.kind}: ${o.fuzz.label}: ${o.detail}`)
    expect(exited ? `process ended: ${mos!.output().slice(-2000)}` : 'alive').toBe('alive')
    expect(bad).toEqual([])
    expect(outcomes).toHaveLength(cases.length)
    // Every operation had its fair share, and the corpus reached the engines (not only the upload checks).
    for (const op of FUZZ_OPERATIONS)
      expect(outcomes.filter((o) => o.fuzz.operation.name === op.name).length).toBeGreaterThanOrEqual(
        Math.floor(CASES / FUZZ_OPERATIONS.length),
      )
    expect(outcomes.filter((o) => o.detail === 'completed').length).toBeGreaterThan(CASES / 10)
    expect(outcomes.filter((o) => o.detail.startsWith('failed')).length).toBeGreaterThan(CASES / 10)

    const health = await call('/api/v1/health')
    expect(health.status).toBe(200)

    // Retention is ~7 s and the sweep runs every ~2 s: every task's input, output and record must go.
    const deadline = Date.now() + 30_000
    let left = [...(await filesUnder(join(dataDir, 'files'))), ...(await filesUnder(join(dataDir, 'records', 'tasks')))]
    while (left.length > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 1000))
      left = [...(await filesUnder(join(dataDir, 'files'))), ...(await filesUnder(join(dataDir, 'records', 'tasks')))]
    }
    expect(left).toEqual([])
  }, 600_000)
})
