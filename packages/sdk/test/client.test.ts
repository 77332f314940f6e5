import { getEventListeners } from 'node:events'
import { http, HttpResponse } from 'msw'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { OPERATION_ENDPOINTS } from '../src/contract/index.ts'
import { createClient, detectVariant, TaskFailedError, type TaskRecord, UserAbortError } from '../src/index.ts'
import { API, BASE, completedTask, failedTask, KEY, mockServer, pendingTask, processingTask } from './support/fixtures.ts'

const server = mockServer()
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }))
afterEach(() => server.resetHandlers())
afterAll(() => server.close())

const client = createClient({ baseURL: BASE, apiKey: KEY, maxRetries: 0 })
const glb = new Uint8Array([0x67, 0x6c, 0x54, 0x46, 2, 0, 0, 0])

/** Records what a submit endpoint received and answers with a pending task. */
function captureSubmit(path: string) {
  const seen: { key: string | null; fields: Record<string, string>; files: { part: string; name: string; bytes: number[] }[] } = {
    key: null,
    fields: {},
    files: [],
  }
  server.use(
    http.post(`${API}${path}`, async ({ request }) => {
      seen.key = request.headers.get('x-api-key')
      for (const [part, value] of (await request.formData()).entries()) {
        if (typeof value === 'string') seen.fields[part] = value
        else seen.files.push({ part, name: value.name, bytes: [...new Uint8Array(await value.arrayBuffer())] })
      }
      return HttpResponse.json({ task_id: 't1', status: 'pending', message: 'queued' })
    }),
  )
  return seen
}

describe('submit calls send multipart with the file name, the fields and the key', () => {
  it('compress', async () => {
    const seen = captureSubmit('/compress')
    const answer = await client.compress({ file: glb, filename: 'box.glb', engine: 'draco', level: 9, position_quantization_bits: 16 })
    expect(answer).toEqual({ task_id: 't1', status: 'pending', message: 'queued' })
    expect(seen.key).toBe(KEY)
    expect(seen.fields).toEqual({ engine: 'draco', level: '9', position_quantization_bits: '16' })
    expect(seen.files).toEqual([{ part: 'file', name: 'box.glb', bytes: [...glb] }])
  })

  it('convert', async () => {
    const seen = captureSubmit('/convert')
    await client.convert({ file: new File([glb], 'scene.glb'), target_format: 'obj' })
    expect(seen.fields).toEqual({ target_format: 'obj' })
    expect(seen.files[0]?.name).toBe('scene.glb')
  })

  it('repair', async () => {
    const seen = captureSubmit('/repair')
    await client.repair({ file: new Blob([glb]), filename: 'broken.glb' })
    expect(seen.fields).toEqual({})
    expect(seen.files[0]).toMatchObject({ name: 'broken.glb', bytes: [...glb] })
  })

  it('diagnose', async () => {
    const seen = captureSubmit('/diagnose')
    await client.diagnose({ file: glb.buffer, filename: 'x.glb' })
    expect(seen.files[0]).toMatchObject({ name: 'x.glb', bytes: [...glb] })
  })

  it('optimizeTextures', async () => {
    const seen = captureSubmit('/textures/optimize')
    await client.optimizeTextures({ file: glb, filename: 'a.png', format: 'webp', quality: 70 })
    expect(seen.fields).toEqual({ format: 'webp', quality: '70' })
  })

  it('encodeKtx2', async () => {
    const seen = captureSubmit('/textures/ktx2')
    await client.encodeKtx2({ file: glb, filename: 'a.png', uastc: true, quality: 3 })
    expect(seen.fields).toEqual({ uastc: 'true', quality: '3' })
  })

  it('every endpoint of the contract table has its call and its …AndWait, posting to its path', async () => {
    for (const endpoint of OPERATION_ENDPOINTS) {
      const calls = client as unknown as Record<string, (params: object) => Promise<unknown>>
      expect(typeof calls[`${endpoint.method}AndWait`], endpoint.method).toBe('function')
      const seen = captureSubmit(endpoint.path)
      await calls[endpoint.method]!({ file: glb, filename: 'a.glb' })
      expect(
        seen.files.map((file) => file.name),
        endpoint.path,
      ).toEqual(['a.glb'])
    }
  })

  it('uploads a web ReadableStream, keeping the given name', async () => {
    const seen = captureSubmit('/compress')
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(glb.subarray(0, 3))
        controller.enqueue(glb.subarray(3))
        controller.close()
      },
    })
    await client.compress({ file: stream, filename: 'streamed.glb', engine: 'meshopt', meshopt_compression_level: 'low' })
    expect(seen.files).toEqual([{ part: 'file', name: 'streamed.glb', bytes: [...glb] }])
    expect(seen.fields).toEqual({ engine: 'meshopt', meshopt_compression_level: 'low' })
  })

  it('refuses bytes without a file name before sending anything', async () => {
    await expect(client.compress({ file: glb, engine: 'draco' })).rejects.toThrow(/file name/)
  })

  it('batchCompress sends every file as a repeated `files` part', async () => {
    let names: string[] = []
    let fields: Record<string, string> = {}
    server.use(
      http.post(`${API}/batch/compress`, async ({ request }) => {
        const form = await request.formData()
        names = form.getAll('files').map((file) => (file as File).name)
        fields = { engine: String(form.get('engine')), level: String(form.get('level')) }
        return HttpResponse.json({
          batch_id: 'b1',
          total: 2,
          tasks: names.map((filename, i) => ({ task_id: `t${i}`, filename, status: 'pending' })),
        })
      }),
    )
    const answer = await client.batchCompress({
      files: [new File([glb], 'one.glb'), { file: glb, filename: 'two.glb' }],
      engine: 'meshopt',
      level: 5,
    })
    expect(names).toEqual(['one.glb', 'two.glb'])
    expect(fields).toEqual({ engine: 'meshopt', level: '5' })
    expect(answer.tasks.map((task) => task.filename)).toEqual(['one.glb', 'two.glb'])
  })

  it("batchCompress types and sends compress's fields beyond engine and level (the Mos extensions a batch applies to each task)", async () => {
    let fields: Record<string, string> = {}
    server.use(
      http.post(`${API}/batch/compress`, async ({ request }) => {
        const form = await request.formData()
        fields = Object.fromEntries([...form.entries()].filter(([, value]) => typeof value === 'string')) as Record<string, string>
        return HttpResponse.json({ batch_id: 'b1', total: 1, tasks: [{ task_id: 't0', filename: 'one.glb', status: 'pending' }] })
      }),
    )
    // Each of these was an excess property of BatchCompressParams (tsc refused this call) before it took compress's fields.
    await client.batchCompress({
      files: [new File([glb], 'one.glb')],
      engine: 'draco',
      position_quantization_bits: 16,
      preset: 'web',
      simplify_ratio: 0.5,
      simplify_error: 0.01,
      texture_max_size: 512,
      texture_power_of_two: true,
      merge: true,
      instance: false,
      callback_url: 'https://example.test/hook',
    })
    expect(fields).toEqual({
      engine: 'draco',
      position_quantization_bits: '16',
      preset: 'web',
      simplify_ratio: '0.5',
      simplify_error: '0.01',
      texture_max_size: '512',
      texture_power_of_two: 'true',
      merge: 'true',
      instance: 'false',
      callback_url: 'https://example.test/hook',
    })
  })
})

describe('reads', () => {
  it('getTask encodes the id', async () => {
    server.use(http.get(`${API}/tasks/:id`, ({ params }) => HttpResponse.json(processingTask(40, String(params.id)))))
    const task = await client.getTask('a/b')
    expect(task).toMatchObject({ task_id: 'a/b', status: 'processing', progress: 40 })
  })

  it('getBatch', async () => {
    const batch = { batch_id: 'b1', status: 'processing', total: 2, completed: 1, failed: 0, tasks: [] }
    server.use(http.get(`${API}/batch/b1`, () => HttpResponse.json(batch)))
    expect(await client.getBatch('b1')).toEqual(batch)
  })

  it('waitForBatch polls until the batch leaves processing', async () => {
    const states = ['processing', 'processing', 'completed']
    let calls = 0
    server.use(
      http.get(`${API}/batch/b1`, () => {
        const status = states[Math.min(calls++, states.length - 1)]
        return HttpResponse.json({ batch_id: 'b1', status, total: 1, completed: status === 'completed' ? 1 : 0, failed: 0, tasks: [] })
      }),
    )
    const seen: string[] = []
    const batch = await client.waitForBatch('b1', { pollIntervalMs: 1, onProgress: (record) => seen.push(record.status) })
    expect(batch.status).toBe('completed')
    expect(calls).toBe(3)
    expect(seen).toEqual(['processing', 'completed'])
  })

  it('download returns the bytes; downloadStream streams them', async () => {
    const bytes = new Uint8Array(100_000).map((_, i) => i % 251)
    server.use(
      http.get(`${API}/tasks/t1/download`, () => new HttpResponse(bytes, { headers: { 'content-type': 'application/octet-stream' } })),
    )
    expect(await client.download('t1')).toEqual(bytes)
    const stream = await client.downloadStream('t1')
    expect(new Uint8Array(await new Response(stream).arrayBuffer())).toEqual(bytes)
  })

  it("downloadStream lets go of the caller's signal once the body is read, cancelled or aborted", async () => {
    server.use(http.get(`${API}/tasks/t1/download`, () => new HttpResponse(new Uint8Array(2000).fill(9))))
    const controller = new AbortController()
    const read = await client.downloadStream('t1', { signal: controller.signal })
    expect(new Uint8Array(await new Response(read).arrayBuffer())).toEqual(new Uint8Array(2000).fill(9))
    await (await client.downloadStream('t1', { signal: controller.signal })).cancel()
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
    // Until then the signal still cancels the body, as a UserAbortError.
    const pending = (await client.downloadStream('t1', { signal: controller.signal })).getReader()
    controller.abort()
    await expect(pending.read()).rejects.toBeInstanceOf(UserAbortError)
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
  })

  it('health, capabilities, licenseInfo return the documents; metrics returns text', async () => {
    const capabilities = { engines: ['draco', 'meshopt'], formats: ['glb'], features: ['compress'] }
    const info = {
      mode: 'trial',
      tier: 'trial',
      license_key: '****abcd',
      expires_at: '2027-01-01T00:00:00Z',
      trial: { enabled: true, used_files: 0, max_files: 100 },
      limits: { max_file_size_mb: 500, max_batch_count: -1, max_texture_size_mb: 64 },
    }
    let healthKey: string | null = 'unset'
    server.use(
      http.get(`${API}/health`, ({ request }) => {
        healthKey = request.headers.get('x-api-key')
        return HttpResponse.json({ status: 'ok' })
      }),
      http.get(`${API}/capabilities`, () => HttpResponse.json(capabilities)),
      http.get(`${API}/license/info`, () => HttpResponse.json(info)),
      http.get(`${API}/metrics`, () =>
        HttpResponse.text('# TYPE service_tasks_total counter\nservice_tasks_total 3\n', {
          headers: { 'content-type': 'text/plain; version=0.0.4' },
        }),
      ),
    )
    expect(await client.health()).toEqual({ status: 'ok' })
    expect(healthKey).toBe(KEY)
    expect(await client.capabilities()).toEqual(capabilities)
    expect(await client.licenseInfo()).toEqual(info)
    expect(await client.metrics()).toContain('service_tasks_total 3')
  })

  it('licenseVerify posts JSON', async () => {
    let body: unknown
    server.use(
      http.post(`${API}/license/verify`, async ({ request }) => {
        body = await request.json()
        return HttpResponse.json({ success: true, message: 'ok', expires_at: 1_900_000_000 })
      }),
    )
    expect(await client.licenseVerify('LIC-123')).toEqual({ success: true, message: 'ok', expires_at: 1_900_000_000 })
    expect(body).toEqual({ license_key: 'LIC-123' })
  })
})

describe('waitForTask', () => {
  function serveSequence(records: TaskRecord[]) {
    let calls = 0
    server.use(http.get(`${API}/tasks/t1`, () => HttpResponse.json(records[Math.min(calls++, records.length - 1)])))
    return () => calls
  }

  it('polls until completed and reports each change of status or progress once', async () => {
    const calls = serveSequence([pendingTask(), processingTask(10), processingTask(10), processingTask(70), completedTask()])
    const seen: string[] = []
    const task = await client.waitForTask('t1', {
      pollIntervalMs: 1,
      onProgress: (record) => seen.push(`${record.status}:${'progress' in record ? record.progress : '-'}`),
    })
    expect(task.status).toBe('completed')
    expect(calls()).toBe(5)
    expect(seen).toEqual(['pending:-', 'processing:10', 'processing:70', 'completed:100'])
  })

  it('resolves with a failed task; compressAndWait throws TaskFailedError carrying it', async () => {
    serveSequence([processingTask(5), failedTask()])
    expect(await client.waitForTask('t1', { pollIntervalMs: 1 })).toEqual(failedTask())
    captureSubmit('/compress')
    const error = await client.compressAndWait({ file: glb, filename: 'box.glb', engine: 'draco' }, { pollIntervalMs: 1 }).catch((e) => e)
    expect(error).toBeInstanceOf(TaskFailedError)
    expect(error.task).toEqual(failedTask())
    expect(error.message).toContain('draco encoder failed')
  })

  it('every ...AndWait helper submits to its endpoint and resolves with the completed record', async () => {
    serveSequence([completedTask()])
    const paths = ['/compress', '/convert', '/repair', '/diagnose', '/textures/optimize', '/textures/ktx2']
    const seen = paths.map(captureSubmit)
    const file = { file: glb, filename: 'a.glb' }
    const results = [
      await client.compressAndWait({ ...file, engine: 'draco' }),
      await client.convertAndWait({ ...file, target_format: 'ply' }),
      await client.repairAndWait(file),
      await client.diagnoseAndWait(file),
      await client.optimizeTexturesAndWait({ ...file, format: 'png' }),
      await client.encodeKtx2AndWait(file),
    ]
    for (const result of results) expect(result).toEqual(completedTask())
    for (const record of seen) expect(record.files).toHaveLength(1)
  })
})

describe('the service address', () => {
  const refusal = (address: string) =>
    new TypeError(`[mos] baseURL must be an http:// or https:// address such as http://localhost:8080, not "${address}"`)

  it('one no request could use is refused when the client is made, not by every request as fetch\'s "unknown scheme"', async () => {
    expect(() => createClient({ baseURL: 'localhost:8080' })).toThrow(refusal('localhost:8080'))
    expect(() => createClient({ baseURL: 'ftp://mos.test' })).toThrow(refusal('ftp://mos.test'))
    await expect(detectVariant('mos.test:8080')).rejects.toThrow(refusal('mos.test:8080'))
  })

  it('one copied with /api/v1 asks for the same paths as one without', async () => {
    server.use(http.get(`${API}/tasks/t1`, () => HttpResponse.json(pendingTask())))
    for (const baseURL of [`${BASE}/api/v1`, `${BASE}/api/v1/`, `${BASE}/`]) {
      expect(await createClient({ baseURL, apiKey: KEY }).getTask('t1')).toEqual(pendingTask())
    }
  })
})

describe('detectVariant', () => {
  it('reads the variant from the health document, which needs no key', async () => {
    const { detectVariant, MosError } = await import('../src/index.ts')
    let body: Record<string, unknown> = { status: 'ok' }
    let key: string | null = 'unset'
    server.use(
      http.get(`${API}/health`, ({ request }) => {
        key = request.headers.get('x-api-key')
        return HttpResponse.json(body)
      }),
    )
    expect(await detectVariant(BASE)).toBe('A')
    expect(key).toBeNull()
    body = { status: 'healthy', version: '0.1.0', uptime_seconds: 5, active_tasks: 0, queue_length: 0 }
    expect(await detectVariant(`${BASE}/`)).toBe('B')
    body = { status: 'up' }
    await expect(detectVariant(BASE)).rejects.toSatisfy((e) => e instanceof MosError && /neither variant/.test((e as Error).message))
  })
})
