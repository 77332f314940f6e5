import { API_KEY_HEADER, type Variant } from '@mos/sdk/contract'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runSuite, type Settings } from '../src/index.ts'
import { API_KEY, json, mapJson, pathOf, startProxy, startRealServer, type Deviation } from './support/servers.ts'
import sharp from 'sharp'
import { KHR_DF_MODEL_ETC1S, read, write } from 'ktx-parse'
import { createFixtures } from '../src/fixtures/index.ts'
import { unzipBundle } from '../src/inspect/model.ts'
import { operationsStub, type StubResult } from './support/operation-stubs.ts'
import { batchStub, chain, licenseStub, metricsStub, rateLimitStub, sizeLimitStub } from './support/stubs.ts'

/**
 * The suite tested: a proxy in front of our real server introduces ONE deviation per case, and the
 * check that owns the rule must report it as a failure. The same check must pass through the proxy
 * without the deviation, so the failure comes from the deviation and nothing else.
 */
interface Case {
  name: string
  variant: Variant
  /** The check that owns the rule. */
  check: string
  /** Built fresh for each run: stubs keep state (counters, uploads). */
  deviation: () => Deviation
  /** Stubs the deviation builds on (e.g. an endpoint today's server lacks), used for the baseline. */
  baseline?: () => Deviation
  settings?: Settings
}

const isTask = (request: Request) => /^\/api\/v1\/tasks\/[^/]+$/.test(pathOf(request)) && request.method === 'GET'
const isDownload = (request: Request) => /^\/api\/v1\/tasks\/[^/]+\/download$/.test(pathOf(request))

/** Rewrites task records with the given status. */
const mapRecords = (status: string, map: (record: Record<string, unknown>) => unknown): Deviation => ({
  response: (request, response) =>
    isTask(request) && response.status === 200 ? mapJson(response, (r) => (r.status === status ? map(r) : r)) : response,
})

/** Serves the uploaded file back as the "compressed" result, sizes kept consistent. */
function echoUpload(): Deviation {
  const uploads = new Map<string, Uint8Array>()
  return {
    async response(request, response, body) {
      const path = pathOf(request)
      if (path === '/api/v1/compress' && response.status === 200) {
        const form = await new Request(request.url, {
          method: 'POST',
          headers: request.headers,
          body: body as Uint8Array<ArrayBuffer>,
        }).formData()
        const file = form.get('file') as File
        const answer = (await response.json()) as { task_id: string }
        uploads.set(answer.task_id, new Uint8Array(await file.arrayBuffer()))
        return json(answer)
      }
      const id = path.split('/')[4] ?? ''
      const original = uploads.get(id)
      if (original && isTask(request)) {
        return mapJson(response, (r) => (r.output ? { ...r, output: { ...(r.output as object), size_bytes: original.byteLength } } : r))
      }
      if (original && isDownload(request) && response.status === 200) {
        return new Response(original as Uint8Array<ArrayBuffer>, { headers: response.headers })
      }
      return response
    },
  }
}

const CASES: Case[] = [
  {
    name: 'wrong health shape (A)',
    variant: 'A',
    check: 'health.document',
    deviation: () => ({ request: (r) => (pathOf(r) === '/api/v1/health' ? json({ status: 'healthy' }) : undefined) }),
  },
  {
    name: 'health without uptime (B)',
    variant: 'B',
    check: 'health.document',
    deviation: () => ({
      response: (r, res) => (pathOf(r) === '/api/v1/health' ? mapJson(res, ({ uptime_seconds: _, ...rest }) => rest) : res),
    }),
  },
  {
    name: 'capabilities without meshopt (A)',
    variant: 'A',
    check: 'capabilities.document',
    deviation: () => ({
      response: (r, res) => (pathOf(r) === '/api/v1/capabilities' ? mapJson(res, (doc) => ({ ...doc, engines: ['draco'] })) : res),
    }),
  },
  {
    name: 'capabilities engines as a list (B)',
    variant: 'B',
    check: 'capabilities.document',
    deviation: () => ({
      response: (r, res) =>
        pathOf(r) === '/api/v1/capabilities' ? mapJson(res, (doc) => ({ ...doc, engines: ['draco', 'meshopt'] })) : res,
    }),
  },
  {
    // The proxy adds the key the client left out: the server then accepts the upload.
    name: '200 instead of 401 on a keyless submit',
    variant: 'A',
    check: 'auth.missing-key.compress',
    deviation: () => ({
      request: (r, body) => {
        if (pathOf(r) !== '/api/v1/compress' || r.headers.has(API_KEY_HEADER)) return undefined
        const headers = new Headers(r.headers)
        headers.set(API_KEY_HEADER, API_KEY)
        return fetch(
          new Request(r.url.replace(new URL(r.url).origin, target('A')), {
            method: 'POST',
            headers,
            body: body as Uint8Array<ArrayBuffer>,
          }),
        )
      },
    }),
  },
  {
    name: 'wrong 401 text',
    variant: 'B',
    check: 'auth.wrong-key.task',
    deviation: () => ({ response: (_, res) => (res.status === 401 ? json({ error: 'unauthorized' }, 401) : res) }),
  },
  {
    name: '401 without a JSON error body',
    variant: 'A',
    check: 'auth.missing-key.download',
    deviation: () => ({
      response: (_, res) =>
        res.status === 401 ? new Response('Unauthorized', { status: 401, headers: { 'content-type': 'text/plain' } }) : res,
    }),
  },
  {
    name: 'wrong missing-field text',
    variant: 'A',
    check: 'compress.missing.engine.text',
    deviation: () => ({
      response: (_, res) =>
        res.status === 400
          ? mapJson(res, (b) => ({ error: `${String(b.error).replace('missing required field: ', '')} is required` }))
          : res,
    }),
  },
  {
    name: 'out-of-range level accepted',
    variant: 'A',
    check: 'compress.field.level.above-max',
    deviation: () => ({
      request: (r, body) =>
        pathOf(r) === '/api/v1/compress' && /name="level"\r\n\r\n11\r\n/.test(new TextDecoder().decode(body))
          ? json({ task_id: 'b6a4c7a2-0000-4000-8000-000000000001', status: 'pending' })
          : undefined,
    }),
  },
  {
    // Pending records are shown as processing too, so the deviation is seen however fast the task runs.
    name: 'no progress on a processing task',
    variant: 'A',
    check: 'task.lifecycle',
    deviation: () => ({
      response: (request, response) =>
        isTask(request) && response.status === 200
          ? mapJson(response, ({ progress: _, ...r }) =>
              r.status === 'pending' || r.status === 'processing'
                ? { ...r, status: 'processing', started_at: r.started_at ?? r.created_at }
                : { ...r, progress: _ },
            )
          : response,
    }),
  },
  {
    name: 'progress on a failed task',
    variant: 'B',
    check: 'task.failed-record',
    deviation: () => mapRecords('failed', (r) => ({ ...r, progress: 100 })),
  },
  {
    name: 'completed progress below 100',
    variant: 'B',
    check: 'task.lifecycle',
    deviation: () => mapRecords('completed', (r) => ({ ...r, progress: 99 })),
  },
  {
    name: 'created_at not ISO 8601',
    variant: 'A',
    check: 'task.lifecycle',
    deviation: () => mapRecords('completed', (r) => ({ ...r, created_at: Date.now() })),
  },
  {
    name: 'failed_at missing',
    variant: 'A',
    check: 'task.failed-record',
    deviation: () => mapRecords('failed', ({ failed_at: _, ...rest }) => rest),
  },
  {
    name: 'download one byte short',
    variant: 'A',
    check: 'download.length',
    deviation: () => ({
      response: async (r, res) =>
        isDownload(r) && res.status === 200 ? new Response((await res.arrayBuffer()).slice(0, -1), { headers: res.headers }) : res,
    }),
  },
  {
    name: 'download as application/json',
    variant: 'B',
    check: 'download.content-type',
    deviation: () => ({
      response: (r, res) => {
        if (!isDownload(r) || res.status !== 200) return res
        const headers = new Headers(res.headers)
        headers.set('content-type', 'application/json')
        return new Response(res.body, { headers })
      },
    }),
  },
  { name: 'GLB without Draco (the upload served back)', variant: 'A', check: 'compress.output.draco', deviation: () => echoUpload() },
  {
    name: 'wrong compression_ratio (input/output)',
    variant: 'A',
    check: 'compress.size-figures',
    deviation: () =>
      mapRecords('completed', (r) => {
        const output = r.output as { size_bytes: number }
        return { ...r, output: { ...output, compression_ratio: (r.input_size_bytes as number) / output.size_bytes } }
      }),
  },
  {
    name: '404 → 500 for an unknown task',
    variant: 'A',
    check: 'not-found.task',
    deviation: () => ({ response: (_, res) => (res.status === 404 ? json({ error: 'internal error: no such task' }, 500) : res) }),
  },
  {
    name: 'reserved diagnose answers 404 in B',
    variant: 'B',
    check: 'reserved.diagnose',
    deviation: () => ({
      request: (r) => (pathOf(r) === '/api/v1/diagnose' && r.headers.has(API_KEY_HEADER) ? json({ error: 'not found' }, 404) : undefined),
    }),
  },
  {
    name: '409 on early download becomes 404',
    variant: 'A',
    check: 'download.not-completed',
    deviation: () => ({ response: (_, res) => (res.status === 409 ? json({ error: 'not found' }, 404) : res) }),
  },
]

const A_METRIC = 'service_tasks_total'
CASES.push(
  {
    name: 'wrong metric name (A)',
    variant: 'A',
    check: 'metrics.families',
    baseline: () => metricsStub('A'),
    deviation: () => metricsStub('A', (t) => t.replaceAll(A_METRIC, 'service_task_total')),
  },
  {
    name: 'a distribution declared as a gauge (B)',
    variant: 'B',
    check: 'metrics.families',
    baseline: () => metricsStub('B'),
    deviation: () =>
      metricsStub('B', (t) =>
        t.replace('service_task_processing_duration_seconds histogram', 'service_task_processing_duration_seconds gauge'),
      ),
  },
  {
    name: 'metrics as text/html',
    variant: 'A',
    check: 'metrics.format',
    baseline: () => metricsStub('A'),
    deviation: () => metricsStub('A', undefined, 'text/html'),
  },
  {
    name: 'metrics line not in the text format',
    variant: 'B',
    check: 'metrics.format',
    baseline: () => metricsStub('B'),
    deviation: () => metricsStub('B', (t) => `${t}service_errors_total three\n`),
  },
  {
    name: 'no completed compress counted (A)',
    variant: 'A',
    check: 'metrics.counts-tasks',
    baseline: () => metricsStub('A'),
    deviation: () => metricsStub('A', (t) => t.replace('status="completed"} 3', 'status="completed"} 0')),
  },
  {
    name: 'licence limits as strings (A)',
    variant: 'A',
    check: 'license.info',
    baseline: () => licenseStub('A'),
    deviation: () =>
      licenseStub('A', { info: (d) => ({ ...d, limits: { max_file_size_mb: '500', max_batch_count: '-1', max_texture_size_mb: '50' } }) }),
  },
  {
    name: 'licence key not masked (A)',
    variant: 'A',
    check: 'license.info',
    baseline: () => licenseStub('A'),
    deviation: () => licenseStub('A', { info: (d) => ({ ...d, license_key: 'MOS-PRO-1234-5678-C0DE' }) }),
  },
  {
    name: 'licence tier as a string (B)',
    variant: 'B',
    check: 'license.info',
    baseline: () => licenseStub('B'),
    deviation: () => licenseStub('B', { info: (d) => ({ ...d, tier: 'pro' }) }),
  },
  {
    name: 'made-up key verifies (A)',
    variant: 'A',
    check: 'license.verify.invalid',
    baseline: () => licenseStub('A'),
    deviation: () => licenseStub('A', { verify: (d) => ({ ...d, valid: true }) }),
  },
  {
    name: 'verify expires_at as ISO in B',
    variant: 'B',
    check: 'license.verify.invalid',
    baseline: () => licenseStub('B'),
    deviation: () => licenseStub('B', { verify: (d) => ({ ...d, expires_at: '2027-01-01T00:00:00Z' }) }),
  },
  {
    name: 'batch submit without filenames',
    variant: 'A',
    check: 'batch.submit',
    baseline: () => batchStub(() => target('A')),
    deviation: () =>
      batchStub(() => target('A'), {
        submit: (a) => ({ ...a, tasks: (a.tasks as Record<string, unknown>[]).map(({ filename: _, ...t }) => t) }),
      }),
  },
  {
    name: 'batch counts that do not add up',
    variant: 'B',
    check: 'batch.record',
    baseline: () => batchStub(() => target('B')),
    deviation: () => batchStub(() => target('B'), { record: (r) => ({ ...r, completed: 0 }) }),
  },
  {
    name: 'batch status outside the documented values',
    variant: 'A',
    check: 'batch.status-values',
    baseline: () => batchStub(() => target('A')),
    deviation: () => batchStub(() => target('A'), { record: (r) => ({ ...r, status: r.status === 'completed' ? 'done' : r.status }) }),
  },
  {
    name: 'a failed sub-task counted as completed',
    variant: 'A',
    check: 'batch.partial-failure',
    baseline: () => batchStub(() => target('A')),
    deviation: () =>
      batchStub(() => target('A'), { record: (r) => ({ ...r, completed: (r.completed as number) + (r.failed as number), failed: 0 }) }),
  },
  {
    name: 'unknown batch → 200',
    variant: 'A',
    check: 'not-found.batch',
    baseline: () => batchStub(() => target('A')),
    deviation: () =>
      chain(
        { request: (r) => (/\/batch\/0{8}-/.test(pathOf(r)) ? json({}) : undefined) },
        batchStub(() => target('A')),
      ),
  },
  {
    name: 'batch over the limit accepted',
    variant: 'B',
    check: 'limits.batch-count',
    settings: { maxBatchCount: 2 },
    baseline: () => batchStub(() => target('B'), {}, { maxCount: 2, status: 402 }),
    deviation: () => batchStub(() => target('B')),
  },
  {
    name: 'rate-limit headers only on the 429',
    variant: 'A',
    check: 'limits.rate-headers',
    deviation: () => ({
      response: (_, res) => {
        if (res.status === 429) return res
        const headers = new Headers(res.headers)
        for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) headers.delete(name)
        return new Response(res.body, { status: res.status, headers })
      },
    }),
  },
  {
    name: 'B capabilities deny the licence the info shows',
    variant: 'B',
    check: 'license.capabilities-agree',
    deviation: () => ({
      response: (r, res) =>
        pathOf(r) === '/api/v1/capabilities'
          ? mapJson(res, (doc) => ({ ...doc, license: { authorized: false, tier: 0, status: 'trial' } }))
          : res,
    }),
  },
  {
    name: 'no rate limit at all',
    variant: 'A',
    check: 'limits.rate',
    settings: { rateLimit: 5 },
    baseline: () => rateLimitStub(5),
    deviation: () => ({}),
  },
  {
    name: '429 without X-RateLimit-Reset',
    variant: 'A',
    check: 'limits.rate',
    settings: { rateLimit: 5 },
    baseline: () => rateLimitStub(5),
    deviation: () => rateLimitStub(5, ({ 'X-RateLimit-Reset': _, ...h }) => h),
  },
  {
    name: '429 without Retry-After',
    variant: 'A',
    check: 'limits.rate.retry-after',
    settings: { rateLimit: 5 },
    baseline: () => rateLimitStub(5),
    deviation: () => rateLimitStub(5, ({ 'Retry-After': _, ...h }) => h),
  },
  {
    name: '429 one request late',
    variant: 'A',
    check: 'limits.rate',
    settings: { rateLimit: 5 },
    baseline: () => rateLimitStub(5),
    deviation: () => rateLimitStub(6),
  },
  {
    name: 'oversize upload → 400 instead of 413 (A)',
    variant: 'A',
    check: 'limits.file-size',
    settings: { maxFileSizeMb: 1 },
    baseline: () => sizeLimitStub('A', 1),
    deviation: () => sizeLimitStub('A', 1, 400),
  },
  {
    name: 'oversize upload → 413 instead of 402 (B)',
    variant: 'B',
    check: 'limits.file-size',
    settings: { maxFileSizeMb: 1 },
    baseline: () => sizeLimitStub('B', 1),
    deviation: () => sizeLimitStub('B', 1, 413),
  },
)

/** One change to a stand-in operation result, for one task type (and target). */
const opFault = (
  variant: Variant,
  match: (type: string, fields: Record<string, string>) => boolean,
  change: (r: StubResult) => StubResult | Promise<StubResult>,
) => ({
  baseline: () => operationsStub(variant),
  deviation: () => operationsStub(variant, (type, fields, r) => (match(type, fields) ? (change(r) as StubResult) : r)),
})
const resize = (r: StubResult, bytes: Uint8Array) => ({
  ...r,
  bytes,
  record: { ...r.record, output: { ...(r.record.output as object), size_bytes: bytes.byteLength } },
})
const withDiagnosis = (r: StubResult, map: (result: Record<string, unknown>) => unknown) => ({
  ...r,
  record: { ...r.record, result: map(r.record.result as Record<string, unknown>) },
})

CASES.push(
  {
    name: 'diagnosis without degenerate_faces',
    variant: 'A',
    check: 'diagnose.result',
    ...opFault(
      'A',
      (t) => t === 'diagnose',
      (r) =>
        withDiagnosis(r, (d) => ({
          ...d,
          meshes: (d.meshes as { issues: { type: string }[] }[]).map((m) => ({
            ...m,
            issues: m.issues.filter((i) => i.type !== 'degenerate_faces'),
          })),
        })),
    ),
  },
  {
    name: 'diagnosis result missing',
    variant: 'A',
    check: 'diagnose.result',
    ...opFault(
      'A',
      (t) => t === 'diagnose',
      (r) => withDiagnosis(r, () => undefined),
    ),
  },
  {
    name: 'diagnosis with a wrong triangle count',
    variant: 'A',
    check: 'diagnose.result',
    ...opFault(
      'A',
      (t) => t === 'diagnose',
      (r) => withDiagnosis(r, (d) => ({ ...d, meshes: (d.meshes as object[]).map((m) => ({ ...m, triangles: 10 })) })),
    ),
  },
  {
    name: 'ETC1S served for uastc=true',
    variant: 'A',
    check: 'textures.ktx2.uastc',
    ...opFault(
      'A',
      (t, f) => t === 'texture_ktx2' && f.uastc === 'true',
      (r) => {
        const container = read(r.bytes)
        container.dataFormatDescriptor[0]!.colorModel = KHR_DF_MODEL_ETC1S
        return resize(r, write(container))
      },
    ),
  },
  {
    name: 'a PNG served for format=webp',
    variant: 'B',
    check: 'textures.optimize.webp',
    ...opFault(
      'B',
      (t, f) => t === 'texture_optimize' && f.format === 'webp',
      async (r) => resize(r, new Uint8Array(await sharp(r.bytes).png().toBuffer())),
    ),
  },
  {
    name: 'the JPEG comes back resized',
    variant: 'A',
    check: 'textures.optimize.jpeg',
    ...opFault(
      'A',
      (t, f) => t === 'texture_optimize' && f.format === 'jpeg',
      async (r) => resize(r, new Uint8Array(await sharp(r.bytes).resize(32, 32).jpeg().toBuffer())),
    ),
  },
  {
    name: 'STL one triangle short',
    variant: 'B',
    check: 'convert.output.stl',
    ...opFault(
      'B',
      (t, f) => t === 'convert' && f.target_format === 'stl',
      (r) => {
        const bytes = Buffer.from(r.bytes.subarray(0, r.bytes.byteLength - 50))
        bytes.writeUInt32LE(bytes.readUInt32LE(80) - 1, 80)
        return resize(r, new Uint8Array(bytes))
      },
    ),
  },
  {
    name: 'OBJ one face short',
    variant: 'A',
    check: 'convert.output.obj',
    ...opFault(
      'A',
      (t, f) => t === 'convert' && f.target_format === 'obj',
      (r) => resize(r, new TextEncoder().encode(new TextDecoder().decode(r.bytes).replace(/\nf [^\n]*\n$/, '\n'))),
    ),
  },
  {
    name: 'gltf target served as plain .gltf, not a .zip',
    variant: 'A',
    check: 'convert.output.gltf',
    ...opFault(
      'A',
      (t, f) => t === 'convert' && f.target_format === 'gltf',
      (r) => resize(r, unzipBundle(r.bytes).get('model.gltf')!),
    ),
  },
  {
    name: 'the textured GLB comes back with its PNG (format=webp)',
    variant: 'A',
    check: 'textures.optimize.model',
    ...opFault(
      'A',
      (t, f) => t === 'texture_optimize' && f.format === 'webp',
      async (r) => resize(r, (await createFixtures()).textured.bytes),
    ),
  },
  {
    name: 'compress answer without message',
    variant: 'B',
    check: 'compress.submit-response',
    deviation: () => ({
      response: (r, res) =>
        pathOf(r) === '/api/v1/compress' && res.status === 200 ? mapJson(res, ({ message: _, ...rest }) => rest) : res,
    }),
  },
  {
    name: 'timestamps in local time, not UTC',
    variant: 'A',
    check: 'task.lifecycle',
    deviation: () => mapRecords('completed', (r) => ({ ...r, completed_at: String(r.completed_at).replace('Z', '+02:00') })),
  },
  {
    name: 'B capabilities without stl output',
    variant: 'B',
    check: 'capabilities.document',
    deviation: () => ({
      response: (r, res) =>
        pathOf(r) === '/api/v1/capabilities'
          ? mapJson(res, (doc) => ({ ...doc, formats: { ...(doc.formats as object), output: ['glb', 'gltf', 'obj', 'ply'] } }))
          : res,
    }),
  },
  {
    name: 'B capabilities with a host path as binary_path',
    variant: 'B',
    check: 'capabilities.no-host-paths',
    deviation: () => ({
      response: (r, res) =>
        pathOf(r) === '/api/v1/capabilities'
          ? mapJson(res, (doc) => {
              const engines = doc.engines as Record<string, object>
              return {
                ...doc,
                engines: { ...engines, draco: { ...engines.draco, binary_path: '/srv/mos/node_modules/draco3dgltf/draco3dgltf.js' } },
              }
            })
          : res,
    }),
  },
  {
    name: 'repair returns the defects unchanged',
    variant: 'B',
    check: 'repair.output',
    ...opFault(
      'B',
      (t) => t === 'repair',
      async (r) => resize(r, (await createFixtures()).defects.bytes),
    ),
  },
)

const servers = new Map<Variant, Awaited<ReturnType<typeof startRealServer>>>()
const target = (variant: Variant) => servers.get(variant)!.url

async function runThrough(c: Case, deviation: (() => Deviation) | undefined) {
  const proxy = await startProxy(target(c.variant), deviation?.())
  try {
    const report = await runSuite({
      baseUrl: proxy.url,
      apiKey: API_KEY,
      variant: c.variant,
      profiles: ['core', 'mos'],
      include: [c.check],
      ...(c.settings ? { settings: c.settings } : {}),
    })
    return report.results.find((r) => r.id === c.check)
  } finally {
    await proxy.close()
  }
}

describe('the suite fails a deviating server, by the check that owns the rule', () => {
  beforeAll(async () => {
    for (const variant of ['A', 'B'] as const) servers.set(variant, await startRealServer(variant))
  }, 60_000)
  afterAll(async () => {
    for (const server of servers.values()) await server.stop()
  })

  it.each(CASES)('$name → $check fails', async (c) => {
    const baseline = await runThrough(c, c.baseline)
    expect(baseline, `check ${c.check} not selected`).toBeDefined()
    expect({ outcome: baseline!.outcome, message: baseline!.message }, 'without the deviation').toMatchObject({ outcome: 'pass' })
    const deviated = await runThrough(c, c.deviation)
    expect({ outcome: deviated!.outcome, message: deviated!.message }, 'with the deviation').toMatchObject({ outcome: 'fail' })
  })
})
