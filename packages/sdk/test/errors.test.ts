import { delay, http, HttpResponse } from 'msw'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  APIError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  ConnectionError,
  createClient,
  ERROR_TEXTS,
  InternalServerError,
  InvalidUploadError,
  MosError,
  NotFoundError,
  NotImplementedError,
  PayloadTooLargeError,
  PaymentRequiredError,
  RateLimitError,
  TimeoutError,
  UserAbortError,
} from '../src/index.ts'
import { closedPort, countingFetch } from './support/closed-port.ts'
import { API, BASE, KEY, mockServer } from './support/fixtures.ts'

const server = mockServer()
beforeAll(() =>
  server.listen({ onUnhandledRequest: ({ url }, print) => (new URL(url).hostname === '127.0.0.1' ? undefined : print.error()) }),
)
afterEach(() => server.resetHandlers())
afterAll(() => server.close())

const client = createClient({ baseURL: BASE, apiKey: KEY, maxRetries: 0 })

describe('HTTP errors map to one class per status, carrying status, message, headers and body', () => {
  const cases = [
    [400, BadRequestError, ERROR_TEXTS.missingField('engine')],
    [401, AuthenticationError, ERROR_TEXTS.unauthorized()],
    [402, PaymentRequiredError, ERROR_TEXTS.fileTooLarge(600, 500)],
    [404, NotFoundError, ERROR_TEXTS.taskNotFound('nope')],
    [409, ConflictError, ERROR_TEXTS.taskNotCompleted('t1', 'processing')],
    [413, PayloadTooLargeError, ERROR_TEXTS.fileTooLarge(600, 500)],
    [429, RateLimitError, ERROR_TEXTS.rateLimited(60)],
    [501, NotImplementedError, ERROR_TEXTS.notImplemented('diagnose')],
    [500, InternalServerError, ERROR_TEXTS.internal('disk full')],
    [503, InternalServerError, 'internal error: shutting down'],
    [405, APIError, ERROR_TEXTS.methodNotAllowed('PUT', '/x')],
  ] as const

  it.each(cases)('%i → %o', async (status, ErrorClass, text) => {
    server.use(http.get(`${API}/tasks/t1`, () => HttpResponse.json({ error: text }, { status, headers: { 'x-request-id': 'r-1' } })))
    const error = await client.getTask('t1').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ErrorClass)
    expect(error).toBeInstanceOf(APIError)
    expect(error).toBeInstanceOf(MosError)
    expect(error).toMatchObject({ status, message: text, body: { error: text }, name: ErrorClass.name })
    expect((error as APIError).headers.get('x-request-id')).toBe('r-1')
  })

  it('keeps a non-JSON body (a proxy page) and says so in the message', async () => {
    server.use(http.get(`${API}/tasks/t1`, () => HttpResponse.text('<html>Bad Gateway</html>', { status: 502 })))
    const error = await client.getTask('t1').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(InternalServerError)
    expect(error).toMatchObject({ status: 502, body: '<html>Bad Gateway</html>', message: '502: <html>Bad Gateway</html>' })
  })

  it('an empty 501 body still gives NotImplementedError', async () => {
    server.use(http.post(`${API}/diagnose`, () => new HttpResponse(null, { status: 501 })))
    const error = await client.diagnose({ file: new Uint8Array(4), filename: 'a.glb' }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(NotImplementedError)
    expect((error as APIError).message).toMatch(/501/)
  })

  it('an error on a streamed download is read and parsed too', async () => {
    const text = ERROR_TEXTS.taskNotCompleted('t1', 'pending')
    server.use(http.get(`${API}/tasks/t1/download`, () => HttpResponse.json({ error: text }, { status: 409 })))
    const error = await client.downloadStream('t1').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ConflictError)
    expect(error).toMatchObject({ message: text, body: { error: text } })
  })
})

describe('failures without an answer', () => {
  it('a refused connection is a ConnectionError with its code, naming the address and the failure in words', async () => {
    const address = `http://127.0.0.1:${await closedPort()}`
    const refused = createClient({ baseURL: `${address}/`, apiKey: KEY, maxRetries: 0 })
    const error = await refused.getTask('t1').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ConnectionError)
    expect(error).toMatchObject({
      code: 'ECONNREFUSED',
      status: undefined,
      message: `connection to ${address} failed: connection refused (ECONNREFUSED)`,
    })
    expect((error as ConnectionError).headers).toBeInstanceOf(Headers)
  })

  it('a dropped connection (network error) is a ConnectionError', async () => {
    server.use(http.get(`${API}/tasks/t1`, () => HttpResponse.error()))
    await expect(client.getTask('t1')).rejects.toBeInstanceOf(ConnectionError)
  })

  it('a slow answer is a TimeoutError after the per-attempt time limit; GET retries it', async () => {
    let calls = 0
    server.use(
      http.get(`${API}/tasks/t1`, async () => {
        calls++
        await delay(2_000)
        return HttpResponse.json({})
      }),
    )
    const slow = createClient({ baseURL: BASE, apiKey: KEY, timeout: 50, maxRetries: 1, retryPolicy: { initialDelayMs: 1 } })
    const error = await slow.getTask('t1').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(TimeoutError)
    expect((error as Error).message).toContain('50 ms')
    expect(calls).toBe(2)
  })

  it('a per-call timeout overrides the client one; a submit is retried after a timeout under one Idempotency-Key', async () => {
    let calls = 0
    const keys = new Set<string | null>()
    server.use(
      http.post(`${API}/repair`, async ({ request }) => {
        calls++
        keys.add(request.headers.get('idempotency-key'))
        await delay(2_000)
        return HttpResponse.json({})
      }),
    )
    const error = await client
      .repair({ file: new Uint8Array(1), filename: 'a.obj' }, { timeout: 30, maxRetries: 3 })
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(TimeoutError)
    // The server sees one request however often it arrives: the key makes the retries safe (docs/api.md).
    expect(calls).toBe(4)
    expect(keys.size).toBe(1)
    expect([...keys][0]).toMatch(/\S{16,}/)
  })

  it("the caller's abort is a UserAbortError and is never retried", async () => {
    let calls = 0
    server.use(
      http.get(`${API}/tasks/t1`, async () => {
        calls++
        await delay(2_000)
        return HttpResponse.json({})
      }),
    )
    const controller = new AbortController()
    const retrying = createClient({ baseURL: BASE, apiKey: KEY, maxRetries: 5 })
    const pending = retrying.getTask('t1', { signal: controller.signal })
    setTimeout(() => controller.abort(), 20)
    await expect(pending).rejects.toBeInstanceOf(UserAbortError)
    expect(calls).toBe(1)
  })

  it('an already aborted signal sends nothing', async () => {
    const counter = countingFetch()
    const counted = createClient({ baseURL: BASE, apiKey: KEY, fetch: counter.fetch })
    await expect(counted.health({ signal: AbortSignal.abort() })).rejects.toBeInstanceOf(UserAbortError)
    expect(counter.calls).toBe(0)
  })
})

describe('an upload that cannot be made is a MosError, and nothing is sent', () => {
  const counter = countingFetch()
  const counted = createClient({ baseURL: BASE, apiKey: KEY, fetch: counter.fetch })

  it('bytes, a Blob or a stream without a file name: InvalidUploadError', async () => {
    const inputs = [new Uint8Array(8), new Blob([new Uint8Array(8)]), new Blob([]).stream()]
    for (const file of inputs) {
      const error = await counted.compress({ file, engine: 'draco' }).catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(InvalidUploadError)
      expect(error).toBeInstanceOf(MosError)
      expect(error).toMatchObject({ name: 'InvalidUploadError', status: undefined, message: expect.stringMatching(/needs a file name/) })
    }
    const batch = await counted.batchCompress({ files: [new Uint8Array(8)], engine: 'draco' }).catch((caught: unknown) => caught)
    expect(batch).toBeInstanceOf(InvalidUploadError)
    expect(counter.calls).toBe(0)
  })

  it('an input kind the runtime cannot upload: InvalidUploadError naming it', async () => {
    const error = await counted
      .compress({ file: 42 as unknown as Uint8Array, filename: 'a.glb', engine: 'draco' })
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(InvalidUploadError)
    expect((error as Error).message).toMatch(/cannot upload a number/)
    expect(counter.calls).toBe(0)
  })
})
