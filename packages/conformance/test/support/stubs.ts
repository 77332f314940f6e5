import { API_KEY_HEADER, ERROR_TEXTS, LIMIT_EXCEEDED_STATUS, parseBatchCompressFields, type Variant } from '@mos/sdk/contract'
import { METRIC_FAMILIES } from '../../src/checks/metrics.ts'
import { API_KEY, json, pathOf, type Deviation } from './servers.ts'

/**
 * Correct stand-ins for endpoints today's server does not serve yet (metrics, licence, batch, rate
 * and size limits), so the checks of those rules can be shown to pass on a right answer and to fail
 * on a wrong one. Each takes a `fault` hook: the deviation cases change one thing in it.
 */
const unauthorized = () => json({ error: ERROR_TEXTS.unauthorized() }, 401)
const keyed = (request: Request) => request.headers.get(API_KEY_HEADER) === API_KEY

/** Chains deviations: the first `request` answer wins; `response` hooks apply in order. */
export function chain(...deviations: Deviation[]): Deviation {
  return {
    async request(request, body) {
      for (const d of deviations) {
        const answer = await d.request?.(request.clone(), body)
        if (answer) return answer
      }
      return undefined
    },
    async response(request, response, body) {
      for (const d of deviations) if (d.response) response = await d.response(request.clone(), response, body)
      return response
    },
  }
}

function metricsExposition(variant: Variant): string {
  const lines: string[] = []
  for (const family of METRIC_FAMILIES[variant]) {
    if (family.distribution) {
      lines.push(
        `# TYPE ${family.name} histogram`,
        `${family.name}_bucket{le="1"} 1`,
        `${family.name}_bucket{le="+Inf"} 1`,
        `${family.name}_sum 0.4`,
        `${family.name}_count 1`,
      )
    } else if (family.name === 'service_tasks_total') {
      lines.push(`# TYPE ${family.name} counter`, `${family.name}{type="compress",status="completed"} 3`)
    } else {
      lines.push(`# TYPE ${family.name} ${family.name.endsWith('_total') ? 'counter' : 'gauge'}`, `${family.name} 3`)
    }
  }
  return `${lines.join('\n')}\n`
}

export function metricsStub(
  variant: Variant,
  fault: (text: string) => string = (t) => t,
  contentType = 'text/plain; version=0.0.4',
): Deviation {
  return {
    request(request) {
      if (pathOf(request) !== '/api/v1/metrics') return undefined
      if (!keyed(request)) return unauthorized()
      return new Response(fault(metricsExposition(variant)), { headers: { 'content-type': contentType } })
    },
  }
}

const LICENSE_DOCS = {
  A: {
    info: {
      mode: 'licensed',
      tier: 'pro',
      license_key: '****-****-****-C0DE',
      expires_at: '2027-01-01T00:00:00.000Z',
      trial: { enabled: false, used_files: 0, max_files: 100 },
      limits: { max_file_size_mb: 500, max_batch_count: -1, max_texture_size_mb: 50 },
    },
    verifyInvalid: {
      valid: false,
      tier: 'none',
      expires_at: '1970-01-01T00:00:00.000Z',
      limits: { max_file_size_mb: 50, max_batch_count: 10 },
    },
  },
  B: {
    info: {
      authorized: true,
      server_fingerprint: 'fp-1',
      status: 'active',
      license_expires_at: 1798761600,
      tier: 2,
      days_until_expiry: 400,
      machine_id: 'machine-1',
    },
    verifyInvalid: { success: false, message: 'license key not recognised', expires_at: 0 },
  },
} as const

export function licenseStub(
  variant: Variant,
  fault: { info?: (doc: Record<string, unknown>) => unknown; verify?: (doc: Record<string, unknown>) => unknown } = {},
): Deviation {
  return {
    async request(request) {
      const path = pathOf(request)
      if (path !== '/api/v1/license/info' && path !== '/api/v1/license/verify') return undefined
      if (!keyed(request)) return unauthorized()
      if (path === '/api/v1/license/info') return json((fault.info ?? ((d) => d))({ ...LICENSE_DOCS[variant].info }))
      let body: { license_key?: unknown }
      try {
        body = (await request.json()) as typeof body
      } catch {
        return json({ error: ERROR_TEXTS.malformedBody('the body is not JSON') }, 400)
      }
      if (typeof body.license_key !== 'string' || body.license_key === '')
        return json({ error: ERROR_TEXTS.missingField('license_key') }, 400)
      return json((fault.verify ?? ((d) => d))({ ...LICENSE_DOCS[variant].verifyInvalid }))
    },
  }
}

/** Batch compress on top of the real single-file compress: one real task per file. */
export function batchStub(
  target: () => string,
  fault: { record?: (record: Record<string, unknown>) => unknown; submit?: (answer: Record<string, unknown>) => unknown } = {},
  limit?: { maxCount: number; status: number },
): Deviation {
  const batches = new Map<string, { task_id: string; filename: string }[]>()
  return {
    async request(request, body) {
      const path = pathOf(request)
      if (path === '/api/v1/batch/compress' && request.method === 'POST') {
        if (!keyed(request)) return unauthorized()
        const form = await new Request(request.url, {
          method: 'POST',
          headers: request.headers,
          body: body as Uint8Array<ArrayBuffer>,
        }).formData()
        const files = form.getAll('files') as File[]
        // As Mos decides (docs/api.md): a 0-byte file is missing, a field given twice is refused.
        if (files.length === 0 || files.some((file) => file.size === 0)) return json({ error: ERROR_TEXTS.missingField('files') }, 400)
        const twice = [...new Set(form.keys())].find((name) => name !== 'files' && form.getAll(name).length > 1)
        if (twice) return json({ error: ERROR_TEXTS.invalidField(twice, 'given more than once') }, 400)
        const raw: Record<string, string> = {}
        for (const [name, value] of form.entries()) if (typeof value === 'string') raw[name] = value
        const parsed = parseBatchCompressFields(raw)
        if (!parsed.ok) return json({ error: parsed.error }, 400)
        if (limit && files.length > limit.maxCount)
          return json(
            { error: `batch of ${files.length} files exceeds limit of ${limit.maxCount} files for current license tier` },
            limit.status,
          )
        const tasks: { task_id: string; filename: string }[] = []
        for (const file of files) {
          const single = new FormData()
          single.append('file', file, file.name)
          for (const [name, value] of form.entries()) if (name !== 'files') single.append(name, value)
          const answer = await fetch(`${target()}/api/v1/compress`, {
            method: 'POST',
            headers: { [API_KEY_HEADER]: API_KEY },
            body: single,
          })
          if (answer.status !== 200) return answer
          tasks.push({ task_id: ((await answer.json()) as { task_id: string }).task_id, filename: file.name })
        }
        const id = crypto.randomUUID()
        batches.set(id, tasks)
        return json(
          (fault.submit ?? ((a) => a))({ batch_id: id, total: tasks.length, tasks: tasks.map((t) => ({ ...t, status: 'pending' })) }),
        )
      }
      const match = /^\/api\/v1\/batch\/([^/]+)$/.exec(path)
      if (match && request.method === 'GET') {
        if (!keyed(request)) return unauthorized()
        const tasks = batches.get(match[1]!)
        if (!tasks) return json({ error: ERROR_TEXTS.batchNotFound(match[1]!) }, 404)
        const items = await Promise.all(
          tasks.map(async (t) => {
            const record = (await (
              await fetch(`${target()}/api/v1/tasks/${t.task_id}`, { headers: { [API_KEY_HEADER]: API_KEY } })
            ).json()) as { status: string }
            return { ...t, status: record.status }
          }),
        )
        const completed = items.filter((t) => t.status === 'completed').length
        const failed = items.filter((t) => t.status === 'failed').length
        const status =
          completed + failed < items.length ? 'processing' : failed === 0 ? 'completed' : completed === 0 ? 'failed' : 'partially_failed'
        return json((fault.record ?? ((r) => r))({ batch_id: match[1], status, total: items.length, completed, failed, tasks: items }))
      }
      return undefined
    },
  }
}

/** A per-key limit of `limit` keyed requests a minute, with the contract's 429. */
export function rateLimitStub(limit: number, fault: (headers: Record<string, string>) => Record<string, string> = (h) => h): Deviation {
  let count = 0
  const resetAt = Math.ceil(Date.now() / 1000) + 60
  return {
    request(request) {
      if (!keyed(request) || pathOf(request) === '/api/v1/health') return undefined
      if (++count <= limit) return undefined
      const headers = fault({
        'X-RateLimit-Limit': String(limit),
        'X-RateLimit-Remaining': '0',
        'X-RateLimit-Reset': String(resetAt),
        'Retry-After': String(Math.max(0, resetAt - Math.floor(Date.now() / 1000))),
      })
      return json({ error: ERROR_TEXTS.rateLimited(limit) }, 429, headers)
    },
  }
}

/** Refuses uploads over `limitMb` as the variant does. */
export function sizeLimitStub(variant: Variant, limitMb: number, status: number = LIMIT_EXCEEDED_STATUS[variant]): Deviation {
  return {
    request(request, body) {
      if (request.method !== 'POST' || !keyed(request) || body.byteLength <= limitMb * 1024 * 1024) return undefined
      const size = Math.round((body.byteLength / (1024 * 1024)) * 10) / 10
      return json({ error: ERROR_TEXTS.fileTooLarge(size, limitMb) }, status)
    },
  }
}
