import { API_KEY_HEADER, type Variant } from '@mos/sdk/contract'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runSuite, type Settings } from '../src/index.ts'
import { API_KEY, json, mapJson, pathOf, startProxy, startRealServer, type Deviation } from './support/servers.ts'

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
  deviation: Deviation
  /** Stubs the deviation builds on (e.g. an endpoint today's server lacks), used for the baseline. */
  baseline?: Deviation
  settings?: Settings
}

const isTask = (request: Request) => /^\/api\/v1\/tasks\/[^/]+$/.test(pathOf(request)) && request.method === 'GET'
const isDownload = (request: Request) => /^\/api\/v1\/tasks\/[^/]+\/download$/.test(pathOf(request))

/** Rewrites task records with the given status. */
const mapRecords = (status: string, map: (record: Record<string, unknown>) => unknown): Deviation => ({
  response: (request, response) => (isTask(request) && response.status === 200 ? mapJson(response, (r) => (r.status === status ? map(r) : r)) : response),
})

/** Serves the uploaded file back as the "compressed" result, sizes kept consistent. */
function echoUpload(): Deviation {
  const uploads = new Map<string, Uint8Array>()
  return {
    async response(request, response, body) {
      const path = pathOf(request)
      if (path === '/api/v1/compress' && response.status === 200) {
        const form = await new Request(request.url, { method: 'POST', headers: request.headers, body: body as Uint8Array<ArrayBuffer> }).formData()
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
  { name: 'wrong health shape (A)', variant: 'A', check: 'health.document', deviation: { request: (r) => (pathOf(r) === '/api/v1/health' ? json({ status: 'healthy' }) : undefined) } },
  {
    name: 'health without uptime (B)', variant: 'B', check: 'health.document',
    deviation: { response: (r, res) => (pathOf(r) === '/api/v1/health' ? mapJson(res, ({ uptime_seconds: _, ...rest }) => rest) : res) },
  },
  {
    name: 'capabilities without meshopt (A)', variant: 'A', check: 'capabilities.document',
    deviation: { response: (r, res) => (pathOf(r) === '/api/v1/capabilities' ? mapJson(res, (doc) => ({ ...doc, engines: ['draco'] })) : res) },
  },
  {
    name: 'capabilities engines as a list (B)', variant: 'B', check: 'capabilities.document',
    deviation: { response: (r, res) => (pathOf(r) === '/api/v1/capabilities' ? mapJson(res, (doc) => ({ ...doc, engines: ['draco', 'meshopt'] })) : res) },
  },
  {
    // The proxy adds the key the client left out: the server then accepts the upload.
    name: '200 instead of 401 on a keyless submit', variant: 'A', check: 'auth.missing-key.compress',
    deviation: {
      request: (r, body) => {
        if (pathOf(r) !== '/api/v1/compress' || r.headers.has(API_KEY_HEADER)) return undefined
        const headers = new Headers(r.headers)
        headers.set(API_KEY_HEADER, API_KEY)
        return fetch(new Request(r.url.replace(new URL(r.url).origin, target('A')), { method: 'POST', headers, body: body as Uint8Array<ArrayBuffer> }))
      },
    },
  },
  {
    name: 'wrong 401 text', variant: 'B', check: 'auth.wrong-key.task',
    deviation: { response: (_, res) => (res.status === 401 ? json({ error: 'unauthorized' }, 401) : res) },
  },
  {
    name: '401 without a JSON error body', variant: 'A', check: 'auth.missing-key.download',
    deviation: { response: (_, res) => (res.status === 401 ? new Response('Unauthorized', { status: 401, headers: { 'content-type': 'text/plain' } }) : res) },
  },
  {
    name: 'wrong missing-field text', variant: 'A', check: 'compress.missing.engine.text',
    deviation: { response: (_, res) => (res.status === 400 ? mapJson(res, (b) => ({ error: String(b.error).replace('missing required field: ', '') + ' is required' })) : res) },
  },
  {
    name: 'out-of-range level accepted', variant: 'A', check: 'compress.field.level.above-max',
    deviation: {
      request: (r, body) =>
        pathOf(r) === '/api/v1/compress' && /name="level"\r\n\r\n11\r\n/.test(new TextDecoder().decode(body))
          ? json({ task_id: 'b6a4c7a2-0000-4000-8000-000000000001', status: 'pending' })
          : undefined,
    },
  },
  { name: 'no progress on a processing task', variant: 'A', check: 'task.lifecycle', deviation: mapRecords('processing', ({ progress: _, ...rest }) => rest) },
  { name: 'progress on a failed task', variant: 'B', check: 'task.failed-record', deviation: mapRecords('failed', (r) => ({ ...r, progress: 100 })) },
  { name: 'completed progress below 100', variant: 'B', check: 'task.lifecycle', deviation: mapRecords('completed', (r) => ({ ...r, progress: 99 })) },
  { name: 'created_at not ISO 8601', variant: 'A', check: 'task.lifecycle', deviation: mapRecords('completed', (r) => ({ ...r, created_at: Date.now() })) },
  { name: 'failed_at missing', variant: 'A', check: 'task.failed-record', deviation: mapRecords('failed', ({ failed_at: _, ...rest }) => rest) },
  {
    name: 'download one byte short', variant: 'A', check: 'download.length',
    deviation: { response: async (r, res) => (isDownload(r) && res.status === 200 ? new Response((await res.arrayBuffer()).slice(0, -1), { headers: res.headers }) : res) },
  },
  {
    name: 'download as application/json', variant: 'B', check: 'download.content-type',
    deviation: {
      response: (r, res) => {
        if (!isDownload(r) || res.status !== 200) return res
        const headers = new Headers(res.headers)
        headers.set('content-type', 'application/json')
        return new Response(res.body, { headers })
      },
    },
  },
  { name: 'GLB without Draco (the upload served back)', variant: 'A', check: 'compress.output.draco', deviation: echoUpload() },
  {
    name: 'wrong compression_ratio (input/output)', variant: 'A', check: 'compress.size-figures',
    deviation: mapRecords('completed', (r) => {
      const output = r.output as { size_bytes: number }
      return { ...r, output: { ...output, compression_ratio: (r.input_size_bytes as number) / output.size_bytes } }
    }),
  },
  {
    name: '404 → 500 for an unknown task', variant: 'A', check: 'not-found.task',
    deviation: { response: (_, res) => (res.status === 404 ? json({ error: 'internal error: no such task' }, 500) : res) },
  },
  {
    name: 'reserved diagnose answers 404 in B', variant: 'B', check: 'reserved.diagnose',
    deviation: { request: (r) => (pathOf(r) === '/api/v1/diagnose' && r.headers.has(API_KEY_HEADER) ? json({ error: 'not found' }, 404) : undefined) },
  },
  {
    name: '409 on early download becomes 404', variant: 'A', check: 'download.not-completed',
    deviation: { response: (_, res) => (res.status === 409 ? json({ error: 'not found' }, 404) : res) },
  },
]

const servers = new Map<Variant, Awaited<ReturnType<typeof startRealServer>>>()
const target = (variant: Variant) => servers.get(variant)!.url

async function runThrough(c: Case, deviation: Deviation | undefined) {
  const proxy = await startProxy(target(c.variant), deviation)
  try {
    const report = await runSuite({
      baseUrl: proxy.url, apiKey: API_KEY, variant: c.variant, profiles: ['core', 'mos'], include: [c.check], ...(c.settings ? { settings: c.settings } : {}),
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
