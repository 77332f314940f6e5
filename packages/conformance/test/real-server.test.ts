import { VARIANTS } from '@mos/sdk/contract'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runSuite, type SuiteReport } from '../src/index.ts'
import { operationsStub } from './support/operation-stubs.ts'
import { API_KEY, startProxy, startRealServer, type Proxy } from './support/servers.ts'
import { batchStub, chain, licenseStub, metricsStub } from './support/stubs.ts'

const failures = (report: SuiteReport) => report.results.filter((r) => r.outcome === 'fail').map((r) => `${r.id}: ${r.message}`)
const outcome = (report: SuiteReport, id: string) => report.results.find((r) => r.id === id)?.outcome

// The project's own CI: the whole suite, both profiles, against our server in each variant.
describe.each(VARIANTS)('the suite against our server, variant %s', (variant) => {
  let server: Awaited<ReturnType<typeof startRealServer>>
  let report: SuiteReport

  beforeAll(async () => {
    server = await startRealServer(variant)
    report = await runSuite({ baseUrl: server.url, apiKey: API_KEY, variant, profiles: ['core', 'mos'] })
  }, 300_000)
  afterAll(async () => {
    await server?.stop()
  })

  it('reports no failure', () => {
    expect(failures(report)).toEqual([])
  })

  it('really ran the central checks (they pass, not skip)', () => {
    const central = [
      'health.document',
      'capabilities.document',
      'auth.missing-key.compress',
      'task.lifecycle',
      'task.failed-record',
      'compress.output.draco',
      'compress.output.meshopt',
      'download.length',
      'download.content-type',
      'not-found.task',
      'repair.output',
      'textures.optimize.webp',
      'textures.optimize.model',
      'batch.record',
      'batch.partial-failure',
      'license.info',
      'license.verify.invalid',
      'metrics.families',
      'metrics.counts-tasks',
      'convert.output.glb',
      'convert.output.gltf',
      'convert.output.obj',
      'convert.output.stl',
      'convert.output.ply',
      'convert.input.obj',
      'task-control.list',
      'task-control.cancel',
      'task-control.delete',
    ]
    const perVariant =
      variant === 'A'
        ? ['diagnose.result', 'textures.ktx2.uastc', 'textures.ktx2.model', 'convert.output.fbx', 'convert.output.dae']
        : ['reserved.diagnose', 'reserved.texture_ktx2', 'compress.output.level-0']
    for (const id of [...central, ...perVariant]) expect(outcome(report, id), id).toBe('pass')
  })

  it('skips only the checks that need a setting (every operation and endpoint is served)', () => {
    const skips = report.results.filter((r) => r.outcome === 'skip')
    for (const skip of skips) expect(`${skip.id}: ${skip.message}`).toMatch(/^limits\.[a-z.-]+: needs --/)
  })
})

// The stand-ins the deviation tests build their faults on (operations, batch, licence, metrics) must
// themselves be right: every check of their groups runs and passes through them.
describe.each(VARIANTS)('the suite through the stand-ins the deviation tests use, variant %s', (variant) => {
  let server: Awaited<ReturnType<typeof startRealServer>>
  let proxy: Proxy
  let report: SuiteReport

  beforeAll(async () => {
    server = await startRealServer(variant)
    proxy = await startProxy(
      server.url,
      chain(
        operationsStub(variant),
        batchStub(() => server.url),
        licenseStub(variant),
        metricsStub(variant),
      ),
    )
    report = await runSuite({
      baseUrl: proxy.url,
      apiKey: API_KEY,
      variant,
      profiles: ['core', 'mos'],
      include: [
        'convert.output',
        'convert.input',
        'repair',
        'diagnose.result',
        'textures',
        'batch',
        'license',
        'metrics',
        'auth',
        'not-found',
      ],
    })
  }, 300_000)
  afterAll(async () => {
    await proxy?.close()
    await server?.stop()
  })

  it('runs every selected check and fails none', () => {
    expect(failures(report)).toEqual([])
    expect(report.results.filter((r) => r.outcome === 'skip').map((r) => r.id)).toEqual([])
    expect(report.results.filter((r) => r.group === 'convert').length).toBe(variant === 'A' ? 8 : 6)
  })
})

// Limits our server already enforces, provoked with small settings on a server of their own.
describe.each(VARIANTS)(
  'the limit checks against our server in its trial (5 files a batch) with a 1 MB upload cap, variant %s',
  (variant) => {
    let server: Awaited<ReturnType<typeof startRealServer>>
    let report: SuiteReport

    beforeAll(async () => {
      server = await startRealServer(variant, { SERVICE__LIMITS__MAX_FILE_SIZE_MB: '1' }, false)
      report = await runSuite({
        baseUrl: server.url,
        apiKey: API_KEY,
        variant,
        include: ['limits.file-size', 'limits.batch-count'],
        settings: { maxFileSizeMb: 1, maxBatchCount: 5 },
        certify: true,
      })
    }, 60_000)
    afterAll(async () => {
      await server?.stop()
    })

    it('passes the size and batch-count limits (413 in A, 402 in B)', () => {
      expect(report.results.map((r) => [r.id, r.outcome, r.message])).toEqual([
        ['limits.batch-count', 'pass', undefined],
        ['limits.batch-count.at-limit', 'pass', undefined],
        ['limits.file-size', 'pass', undefined],
      ])
    })
  },
)

// The rate limit (variant A), provoked with a limit of 5 on a server of its own.
describe('the rate-limit check against our server with 5 requests a minute, variant A', () => {
  let server: Awaited<ReturnType<typeof startRealServer>>
  let report: SuiteReport

  beforeAll(async () => {
    server = await startRealServer('A', { SERVICE__SERVER__RATE_LIMIT_PER_MINUTE: '5' })
    report = await runSuite({
      baseUrl: server.url,
      apiKey: API_KEY,
      variant: 'A',
      profiles: ['core', 'mos'],
      include: ['limits.rate'],
      settings: { rateLimit: 5 },
    })
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
  })

  it('passes limits.rate: 429 with the text and the three headers, and Retry-After', () => {
    expect(report.results.map((r) => [r.id, r.outcome])).toEqual([
      ['limits.rate', 'pass'],
      ['limits.rate.retry-after', 'pass'],
    ])
  })
})
