import { http, HttpResponse } from 'msw'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import {
  AuthenticationError,
  ConflictError,
  createClient,
  EXTENSION_ERROR_TEXTS,
  InternalServerError,
  MosError,
  NotImplementedError,
  RateLimitError,
  retryDelayMs,
  RETRY_DEFAULTS,
  UserAbortError,
} from '../src/index.ts'
import { closedPort, countingFetch } from './support/closed-port.ts'
import { API, BASE, KEY, mockServer, processingTask } from './support/fixtures.ts'

const server = mockServer()
beforeAll(() =>
  server.listen({ onUnhandledRequest: ({ url }, print) => (new URL(url).hostname === '127.0.0.1' ? undefined : print.error()) }),
)
afterEach(() => {
  server.resetHandlers()
  vi.useRealTimers()
})
afterAll(() => server.close())

/** Fast backoff so counted-retry tests take milliseconds; the delays themselves are tested below. */
const fast = { initialDelayMs: 1, maxDelayMs: 2 }
const client = createClient({ baseURL: BASE, apiKey: KEY, retryPolicy: fast })
const upload = { file: new Uint8Array(8), filename: 'a.glb', engine: 'draco' as const }

/** Answers with each response in turn (the last one repeats) and counts the calls. */
function sequence(method: 'get' | 'post', path: string, responses: (() => Response)[]) {
  const counter = { calls: 0 }
  server.use(http[method](`${API}${path}`, () => responses[Math.min(counter.calls++, responses.length - 1)]!()))
  return counter
}
const status =
  (code: number, headers: Record<string, string> = {}) =>
  () =>
    HttpResponse.json({ error: `e${code}` }, { status: code, headers })
const ok = () => HttpResponse.json(processingTask(50))
const submitted = () => HttpResponse.json({ task_id: 't1', status: 'pending' })

describe('which failures are retried', () => {
  it('GET: 5xx is retried until it succeeds', async () => {
    const counter = sequence('get', '/tasks/t1', [status(503), status(500), ok])
    expect(await client.getTask('t1')).toMatchObject({ progress: 50 })
    expect(counter.calls).toBe(3)
  })

  it('GET: gives up after maxRetries (default 2) with the last error', async () => {
    const counter = sequence('get', '/tasks/t1', [status(500)])
    await expect(client.getTask('t1')).rejects.toBeInstanceOf(InternalServerError)
    expect(counter.calls).toBe(3)
  })

  it('GET: maxRetries per call and per client', async () => {
    const counter = sequence('get', '/tasks/t1', [status(502)])
    await expect(client.getTask('t1', { maxRetries: 4 })).rejects.toBeInstanceOf(InternalServerError)
    expect(counter.calls).toBe(5)
    counter.calls = 0
    const once = createClient({ baseURL: BASE, apiKey: KEY, maxRetries: 0 })
    await expect(once.getTask('t1')).rejects.toBeInstanceOf(InternalServerError)
    expect(counter.calls).toBe(1)
  })

  it('GET: a dropped connection is retried', async () => {
    const counter = sequence('get', '/tasks/t1', [() => HttpResponse.error(), ok])
    expect(await client.getTask('t1')).toMatchObject({ status: 'processing' })
    expect(counter.calls).toBe(2)
  })

  it('GET: 4xx and 501 are final', async () => {
    const unauthorized = sequence('get', '/tasks/t1', [status(401)])
    await expect(client.getTask('t1')).rejects.toBeInstanceOf(AuthenticationError)
    expect(unauthorized.calls).toBe(1)
    const reserved = sequence('get', '/capabilities', [status(501)])
    await expect(client.capabilities()).rejects.toBeInstanceOf(NotImplementedError)
    expect(reserved.calls).toBe(1)
  })

  it('POST without an Idempotency-Key (licence verify): 5xx and a dropped connection are not retried (the handler may have run)', async () => {
    for (const failure of [status(500), () => HttpResponse.error()]) {
      const counter = sequence('post', '/license/verify', [failure, submitted])
      await expect(client.licenseVerify('MOS-1')).rejects.toBeInstanceOf(MosError)
      expect(counter.calls).toBe(1)
    }
  })

  it('a submit carries an Idempotency-Key: 5xx and a dropped connection are retried (the server answers a retry with the first task)', async () => {
    for (const failure of [status(500), () => HttpResponse.error()]) {
      const counter = sequence('post', '/compress', [failure, submitted])
      expect(await client.compress(upload)).toEqual({ task_id: 't1', status: 'pending' })
      expect(counter.calls).toBe(2)
    }
  })

  it("a submit answered 409 'still being handled' (its key's first request not answered yet) is retried under the same key; other 409s are final", async () => {
    const inFlight = () =>
      HttpResponse.json({ error: EXTENSION_ERROR_TEXTS.idempotencyKeyInFlight() }, { status: 409, headers: { 'retry-after': '0' } })
    const keys: (string | null)[] = []
    server.use(
      http.post(`${API}/compress`, ({ request }) => {
        keys.push(request.headers.get('idempotency-key'))
        return keys.length < 3 ? inFlight() : submitted()
      }),
    )
    expect(await client.compress(upload)).toEqual({ task_id: 't1', status: 'pending' })
    expect(keys).toHaveLength(3)
    expect(new Set(keys).size).toBe(1)
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/)

    // Another 409 on a submit, and a download before completion: the answer is the server's last word.
    const other = sequence('post', '/compress', [() => HttpResponse.json({ error: 'conflict' }, { status: 409 }), submitted])
    await expect(client.compress(upload)).rejects.toMatchObject({ status: 409, message: 'conflict' })
    expect(other.calls).toBe(1)
    const download = sequence('get', '/tasks/t1/download', [() => HttpResponse.json({ error: 'task not completed: t1' }, { status: 409 })])
    await expect(client.download('t1')).rejects.toBeInstanceOf(ConflictError)
    expect(download.calls).toBe(1)
  })

  it("a submit still answered 409 'still being handled' after maxRetries fails with that ConflictError", async () => {
    const counter = sequence('post', '/compress', [
      () => HttpResponse.json({ error: EXTENSION_ERROR_TEXTS.idempotencyKeyInFlight() }, { status: 409 }),
    ])
    const error = await client.compress(upload).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ConflictError)
    expect((error as ConflictError).message).toBe(EXTENSION_ERROR_TEXTS.idempotencyKeyInFlight())
    expect(counter.calls).toBe(3)
  })

  it('POST: 429 is retried, with the same body', async () => {
    const sizes: number[] = []
    let calls = 0
    server.use(
      http.post(`${API}/compress`, async ({ request }) => {
        sizes.push(((await request.formData()).get('file') as File).size)
        return calls++ < 2 ? status(429)() : submitted()
      }),
    )
    expect(await client.compress(upload)).toEqual({ task_id: 't1', status: 'pending' })
    expect(sizes).toEqual([8, 8, 8])
  })

  it('POST: a refused connection (ECONNREFUSED, never reached a handler) is retried', async () => {
    const counter = countingFetch()
    const refused = createClient({
      baseURL: `http://127.0.0.1:${await closedPort()}`,
      apiKey: KEY,
      fetch: counter.fetch,
      retryPolicy: fast,
    })
    await expect(refused.compress(upload)).rejects.toMatchObject({ code: 'ECONNREFUSED' })
    expect(counter.calls).toBe(3)
  })

  it('an abort during the backoff stops the retries', async () => {
    const counter = sequence('get', '/tasks/t1', [status(503)])
    const controller = new AbortController()
    const slow = createClient({ baseURL: BASE, apiKey: KEY, maxRetries: 5, retryPolicy: { initialDelayMs: 10_000 } })
    const pending = slow.getTask('t1', { signal: controller.signal })
    await vi.waitFor(() => expect(counter.calls).toBe(1))
    controller.abort()
    await expect(pending).rejects.toBeInstanceOf(UserAbortError)
    expect(counter.calls).toBe(1)
  })
})

describe('retry delays honour the server (fake timers)', () => {
  const slowPolicy = createClient({ baseURL: BASE, apiKey: KEY, maxRetries: 1 })

  /** Starts a call with fake timers and returns how many requests were seen after advancing `ms`. */
  async function callsAfter(counter: { calls: number }, run: () => Promise<unknown>, steps: number[]) {
    const done = run().catch((error: unknown) => error)
    const seen: number[] = []
    for (const ms of steps) {
      await vi.advanceTimersByTimeAsync(ms)
      seen.push(counter.calls)
    }
    await vi.runAllTimersAsync()
    return { seen, result: await done }
  }

  it('Retry-After in seconds', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] })
    const counter = sequence('get', '/tasks/t1', [status(429, { 'retry-after': '5' }), ok])
    const { seen, result } = await callsAfter(counter, () => slowPolicy.getTask('t1'), [0, 4_990, 10])
    expect(seen).toEqual([1, 1, 2])
    expect(result).toMatchObject({ status: 'processing' })
  })

  it('Retry-After as an HTTP date', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: new Date('2026-11-22T00:00:00Z') })
    const counter = sequence('get', '/tasks/t1', [status(503, { 'retry-after': 'Sun, 22 Nov 2026 00:00:03 GMT' }), ok])
    const { seen } = await callsAfter(counter, () => slowPolicy.getTask('t1'), [0, 2_990, 10])
    expect(seen).toEqual([1, 1, 2])
  })

  it("Retry-After on a submit's 409 'still being handled'", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] })
    const inFlight = () =>
      HttpResponse.json({ error: EXTENSION_ERROR_TEXTS.idempotencyKeyInFlight() }, { status: 409, headers: { 'retry-after': '3' } })
    const counter = sequence('post', '/compress', [inFlight, submitted])
    const { seen, result } = await callsAfter(counter, () => slowPolicy.compress(upload), [0, 2_990, 10])
    expect(seen).toEqual([1, 1, 2])
    expect(result).toEqual({ task_id: 't1', status: 'pending' })
  })

  it('X-RateLimit-Reset (integer Unix seconds) on a POST 429', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: new Date('2026-11-22T00:00:00Z') })
    const reset = String(Date.parse('2026-11-22T00:00:07Z') / 1000)
    const counter = sequence('post', '/compress', [
      status(429, { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset }),
      submitted,
    ])
    const { seen, result } = await callsAfter(counter, () => slowPolicy.compress(upload), [0, 6_990, 10])
    expect(seen).toEqual([1, 1, 2])
    expect(result).toEqual({ task_id: 't1', status: 'pending' })
  })

  it('without a hint: exponential backoff, 0.5 s then 1 s', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] })
    const counter = sequence('get', '/tasks/t1', [status(500)])
    const twice = createClient({ baseURL: BASE, apiKey: KEY, maxRetries: 2 })
    const random = vi.spyOn(Math, 'random').mockReturnValue(0)
    const { seen, result } = await callsAfter(counter, () => twice.getTask('t1'), [0, 499, 1, 999, 1])
    random.mockRestore()
    // no jitter drawn: first retry after 500 ms, second 1000 ms after it
    expect(seen).toEqual([1, 1, 2, 2, 3])
    expect(result).toBeInstanceOf(InternalServerError)
  })
})

describe('retryDelayMs', () => {
  const now = Date.parse('2026-11-22T00:00:00Z')
  it('doubles up to the ceiling, jitter only shortens', () => {
    expect([0, 1, 2, 3, 4, 5].map((retry) => retryDelayMs(retry, undefined, RETRY_DEFAULTS, now, () => 0))).toEqual([
      500, 1000, 2000, 4000, 8000, 8000,
    ])
    expect(retryDelayMs(0, undefined, RETRY_DEFAULTS, now, () => 0.999)).toBe(375)
  })
  it('prefers Retry-After over X-RateLimit-Reset, and ignores absurd hints', () => {
    const both = new Headers({ 'retry-after': '1.5', 'x-ratelimit-reset': String(now / 1000 + 30) })
    expect(retryDelayMs(0, both, RETRY_DEFAULTS, now)).toBe(1500)
    expect(retryDelayMs(0, new Headers({ 'x-ratelimit-reset': String(now / 1000 + 30) }), RETRY_DEFAULTS, now)).toBe(30_000)
    expect(retryDelayMs(0, new Headers({ 'retry-after': '3600' }), RETRY_DEFAULTS, now, () => 0)).toBe(500)
    expect(retryDelayMs(0, new Headers({ 'retry-after': 'soon' }), RETRY_DEFAULTS, now, () => 0)).toBe(500)
  })
  it('RateLimitError.retryAfterMs reads the same headers', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now })
    server.use(
      http.get(`${API}/tasks/t1`, () =>
        HttpResponse.json({ error: 'slow down' }, { status: 429, headers: { 'x-ratelimit-reset': String(now / 1000 + 12) } }),
      ),
    )
    const error = await createClient({ baseURL: BASE, apiKey: KEY, maxRetries: 0 })
      .getTask('t1')
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(RateLimitError)
    expect((error as RateLimitError).retryAfterMs).toBe(12_000)
  })
})
