import { readdir, readFile } from 'node:fs/promises'
import { connect } from 'node:net'
import { join } from 'node:path'
import { ERROR_TEXTS } from '@mos/sdk/contract'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sleep, until } from '../../../test/support/poll.ts'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { throwAwayLicenceEnv } from '../../../test/support/service-env.ts'
import { API_KEY, tempDir } from './support/harness.ts'
import { startMos, stopMosGroup, type MosProcess } from './support/processes.ts'
import { descriptors, hostileUploadCases } from './support/hostile-upload-cases.ts'
import { multipart, parseAnswer, pieces, rawRequest, sendInPieces } from './support/raw-http.ts'

const { available, paths } = corpusFiles({ box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb') })

const MB = 1024 * 1024
const LIMIT_MB = 1
const BATCH_LIMIT_MB = 2
const JSON_LIMIT = 8 * 1024
const AUTH_FAILURES = 6

/** What is left under the data folder: task folders, inputs, `.part` files, task records. */
async function leftovers(base: string): Promise<string[]> {
  const list = async (folder: string) =>
    (await readdir(join(base, folder), { recursive: true }).catch(() => [] as string[])).map((entry) => `${folder}/${String(entry)}`)
  return [...(await list('files/tasks')), ...(await list('records/tasks'))]
}

describe.skipIf(!available)('hostile requests against the real server (fs storage)', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let server: MosProcess
  let serverB: MosProcess
  let base: string
  const head = (path: string, headers: Record<string, string | number>) =>
    [
      `POST ${path} HTTP/1.1`,
      `Host: 127.0.0.1:${server.port}`,
      ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    ].join('\r\n')

  beforeAll(async () => {
    dir = await tempDir()
    base = join(dir.path, 'a')
    const common = {
      SERVICE__AUTH__API_KEYS: API_KEY,
      SERVICE__SERVER__HOST: '127.0.0.1',
      SERVICE__SERVER__PORT: '0',
      SERVICE__SERVER__RATE_LIMIT_PER_MINUTE: '1000000',
      SERVICE__ENGINES__THREADS: '1',
      SERVICE__ENGINES__PRESTART: 'false',
      SERVICE__LIMITS__MAX_FILE_SIZE_MB: String(LIMIT_MB),
      SERVICE__LIMITS__MAX_BATCH_SIZE_MB: String(BATCH_LIMIT_MB),
      SERVICE__SERVER__AUTH_FAILURES_PER_MINUTE: String(AUTH_FAILURES),
      ...throwAwayLicenceEnv(),
    }
    ;[server, serverB] = await Promise.all([
      startMos('hostile-a', { ...common, SERVICE__STORAGE__FS__BASE: base }),
      startMos('hostile-b', { ...common, SERVICE__SERVER__VARIANT: 'B', SERVICE__STORAGE__FS__BASE: join(dir.path, 'b') }),
    ])
  }, 120_000)
  afterAll(async () => {
    await stopMosGroup([server, serverB])
    // The last-resort handlers in main.ts are never reached by anything this suite sends.
    expect(server.output()).not.toMatch(/uncaught exception|unhandled rejection/)
    await dir?.remove()
  })

  /** After every case: the process lives, answers, and kept nothing of the refused request. */
  async function expectHealthyAndClean(): Promise<void> {
    expect(server.child.exitCode).toBeNull()
    expect((await fetch(`${server.url}/api/v1/health`)).status).toBe(200)
    expect(
      await until(
        () => leftovers(base),
        (files) => files.length === 0,
        15_000,
      ),
    ).toEqual([])
  }

  it('answers a contract error to malformed HTTP: a garbage request line, headers too large', async () => {
    const garbage = await rawRequest({ port: server.port, head: 'BREW /pot HTCPCP/9\r\nGarbage' })
    expect(garbage.status).toBe(400)
    expect(JSON.parse(garbage.body).error).toMatch(/^malformed request: /)
    const hugeHeaders = await rawRequest({
      port: server.port,
      head: head('/api/v1/compress', { 'X-API-Key': API_KEY, 'X-Padding': 'p'.repeat(20_000) }),
    })
    expect(hugeHeaders.status).toBe(431)
    expect(JSON.parse(hugeHeaders.body)).toEqual({ error: 'malformed request: headers too large' })
    // Framing errors say what is wrong with the framing, in the parser's words.
    const framing: [Record<string, string>, string, string][] = [
      [{ 'Transfer-Encoding': 'chunked' }, 'zz\r\nabc\r\n0\r\n\r\n', 'Invalid character in chunk size'],
      [{ 'Transfer-Encoding': 'chunked' }, '3\r\nabcdef\r\n0\r\n\r\n', 'Expected LF after chunk data'],
      [{ 'Transfer-Encoding': 'chunked', 'Content-Length': '5' }, '0\r\n\r\n', "Content-Length can't be present with Transfer-Encoding"],
      [{ 'Content-Length': '-5' }, '', 'Invalid character in Content-Length'],
    ]
    for (const [headers, body, reason] of framing) {
      const answer = await rawRequest({
        port: server.port,
        head: head('/api/v1/compress', { 'X-API-Key': API_KEY, 'Content-Type': 'multipart/form-data; boundary=B', ...headers }),
        body: [Buffer.from(body)],
      })
      expect([answer.status, JSON.parse(answer.body)]).toEqual([400, { error: `malformed request: invalid HTTP (${reason})` }])
    }
    await expectHealthyAndClean()
  })

  it('a URL too long gets 414 and headers too large 431, whether the request comes in one read or in pieces', async () => {
    const longUrl = `/api/v1/health?q=${'a'.repeat(20_000)}`
    const uriTooLong = {
      status: 414,
      body: { error: 'malformed request: the URL is too long (the URL and headers may hold 16384 bytes together)' },
    }
    const headersTooLarge = { status: 431, body: { error: 'malformed request: headers too large' } }
    const outcome = (answer: string) => {
      const parsed = parseAnswer(answer)
      expect(parsed.headers.connection).toBe('close')
      return { status: parsed.status, body: JSON.parse(parsed.body) as unknown }
    }
    const whole = await rawRequest({ port: server.port, head: `GET ${longUrl} HTTP/1.1\r\nHost: x` })
    expect({ status: whole.status, body: JSON.parse(whole.body) }).toEqual(uriTooLong)
    // In pieces of 7 KB: the overflow strikes in a read that holds neither the line's start nor its end.
    const split = (text: string) => Array.from({ length: Math.ceil(text.length / 7000) }, (_, i) => text.slice(i * 7000, (i + 1) * 7000))
    expect(outcome(await sendInPieces(server.port, split(`GET ${longUrl} HTTP/1.1\r\nHost: x\r\n\r\n`)))).toEqual(uriTooLong)
    const bigHeader = `GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Padding: ${'p'.repeat(20_000)}\r\n\r\n`
    expect(outcome(await sendInPieces(server.port, split(bigHeader)))).toEqual(headersTooLarge)
    const manyHeaders = `GET /api/v1/health HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 400 }, (_, i) => `X-H${i}: ${'v'.repeat(50)}\r\n`).join('')}\r\n`
    expect(outcome(await sendInPieces(server.port, [manyHeaders]))).toEqual(headersTooLarge)
    // A long URL as the second request of a kept-alive connection: the first is answered, the second refused.
    const kept = await sendInPieces(server.port, [
      'GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n',
      ...split(`GET ${longUrl} HTTP/1.1\r\nHost: x\r\n\r\n`),
    ])
    expect([...kept.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => match[1])).toEqual(['200', '414'])
    // Node's fetch (undici) reads the answer: a client learns what to shorten.
    const fetched = await fetch(`${server.url}${longUrl}`)
    expect({ status: fetched.status, body: await fetched.json() }).toEqual(uriTooLong)
    await expectHealthyAndClean()
  })

  it("answers the contract's error where Node's server answered with no body or none at all: an Expect other than 100-continue, no Host, CONNECT", async () => {
    const expectation = await rawRequest({
      port: server.port,
      head: head('/api/v1/compress', { 'X-API-Key': API_KEY, 'Content-Length': 5, Expect: '200-ok' }),
      body: [Buffer.from('hello')],
    })
    expect([expectation.status, JSON.parse(expectation.body)]).toEqual([
      417,
      { error: 'malformed request: the only Expect header taken is 100-continue' },
    ])
    const noHost = await rawRequest({ port: server.port, head: `GET /api/v1/health HTTP/1.1\r\nX-API-Key: ${API_KEY}` })
    expect([noHost.status, JSON.parse(noHost.body)]).toEqual([400, { error: 'malformed request: an HTTP/1.1 request needs a Host header' }])
    // HTTP/1.0 has no Host header to require.
    const oldClient = await rawRequest({ port: server.port, head: 'GET /api/v1/health HTTP/1.0' })
    expect([oldClient.status, JSON.parse(oldClient.body)]).toEqual([200, { status: 'ok' }])
    const tunnel = await rawRequest({ port: server.port, head: 'CONNECT 127.0.0.1:6379 HTTP/1.1\r\nHost: 127.0.0.1:6379' })
    expect([tunnel.status, JSON.parse(tunnel.body)]).toEqual([405, { error: 'method not allowed: CONNECT 127.0.0.1:6379' }])
    await expectHealthyAndClean()
  })

  // The upload cases every runtime and storage passes (runtimes.test.ts runs them on Deno, Bun, workerd, S3).
  hostileUploadCases({
    server: () => server,
    apiKey: API_KEY,
    limitMb: LIMIT_MB,
    batchLimitMb: BATCH_LIMIT_MB,
    leftovers: () => leftovers(base),
  })

  // Node on fs holds tighter bounds than the shared cases' (any runtime's connection pools, socket
  // buffers): no more than 2 descriptors after 100 drops and no `.part` file, refusals before 2× the limit.
  it('100 clients dropping their uploads mid-body leave no descriptor, file or pending request', async () => {
    const before = await descriptors(server.pid)
    const upload = multipart({ name: 'drop.glb', bytes: new Uint8Array(900 * 1024) })
    const total = upload.head.length + upload.file.length + upload.tail.length
    for (let round = 0; round < 5; round++) {
      await Promise.all(
        Array.from({ length: 20 }, async () => {
          const socket = connect(server.port, '127.0.0.1')
          socket.on('error', () => undefined)
          await new Promise((resolve) => socket.once('connect', resolve))
          socket.write(
            `${head('/api/v1/compress', { 'X-API-Key': API_KEY, 'Content-Type': `multipart/form-data; boundary=${upload.boundary}`, 'Content-Length': total })}\r\n\r\n`,
          )
          socket.write(upload.head)
          socket.write(upload.file.subarray(0, 400 * 1024))
          await sleep(150) // the server has opened the file and is writing it
          socket.resetAndDestroy()
        }),
      )
    }
    // Closing happens as each abort is noticed: on a busy machine that takes a while, a leak never ends.
    const after = await until(
      () => descriptors(server.pid),
      (fds) => fds.length <= before.length + 2 && !fds.some((target) => target.includes('.part')),
      30_000,
    )
    expect(after.length, `before: ${before.length}, after: ${after.length}`).toBeLessThanOrEqual(before.length + 2)
    expect(after.filter((target) => target.includes('.part'))).toEqual([])
    await expectHealthyAndClean()
  }, 60_000)

  describe('bodies 10× over every limit are refused before 2× the limit is read', () => {
    const paced = { paceMs: 2 }
    it('single upload, declared length: refused from the headers', async () => {
      const upload = multipart({ name: 'big.glb', bytes: new Uint8Array(0) })
      const answer = await rawRequest({
        port: server.port,
        head: head('/api/v1/compress', {
          'X-API-Key': API_KEY,
          'Content-Type': `multipart/form-data; boundary=${upload.boundary}`,
          'Content-Length': 10 * LIMIT_MB * MB,
        }),
        body: [upload.head, ...pieces(10 * LIMIT_MB * MB)],
        ...paced,
        headStartMs: 5000,
      })
      expect(answer.status).toBe(413)
      expect(JSON.parse(answer.body)).toEqual({ error: ERROR_TEXTS.fileTooLarge(10, LIMIT_MB) })
      expect(answer.writtenBeforeAnswer).toBeLessThan(2 * LIMIT_MB * MB)
      await expectHealthyAndClean()
    })

    it('single upload, chunked: cut while it streams', async () => {
      const upload = multipart({ name: 'big.glb', bytes: new Uint8Array(0) })
      const answer = await rawRequest({
        port: server.port,
        head: head('/api/v1/compress', {
          'X-API-Key': API_KEY,
          'Content-Type': `multipart/form-data; boundary=${upload.boundary}`,
          'Transfer-Encoding': 'chunked',
        }),
        body: [upload.head, ...pieces(10 * LIMIT_MB * MB)],
        chunked: true,
        ...paced,
      })
      expect(answer.status).toBe(413)
      expect(JSON.parse(answer.body).error).toMatch(
        new RegExp(`^file size over [\\d.]+MB exceeds limit of ${LIMIT_MB}MB for current license tier$`),
      )
      expect(answer.writtenBeforeAnswer).toBeLessThan(2 * LIMIT_MB * MB)
      await expectHealthyAndClean()
    })

    it('batch: the total, declared and chunked', async () => {
      const boundary = 'BATCH'
      const part = (index: number) =>
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="f${index}.glb"\r\n\r\n`)
      const batchBody = function* () {
        for (let index = 0; index < 40; index++) {
          yield part(index)
          yield* pieces((BATCH_LIMIT_MB * MB) / 4) // 0.5 MB per file: under the per-file limit, 20 MB in all
          yield Buffer.from('\r\n')
        }
      }
      const declared = await rawRequest({
        port: server.port,
        head: head('/api/v1/batch/compress', {
          'X-API-Key': API_KEY,
          'Content-Type': `multipart/form-data; boundary=${boundary}`,
          'Content-Length': 10 * BATCH_LIMIT_MB * MB,
        }),
        body: batchBody(),
        ...paced,
      })
      expect(declared.status).toBe(413)
      expect(JSON.parse(declared.body).error).toMatch(/^request body of \d+ bytes exceeds limit of \d+ bytes$/)
      expect(declared.writtenBeforeAnswer).toBeLessThan(2 * BATCH_LIMIT_MB * MB)

      const chunked = await rawRequest({
        port: server.port,
        head: head('/api/v1/batch/compress', {
          'X-API-Key': API_KEY,
          'Content-Type': `multipart/form-data; boundary=${boundary}`,
          'Transfer-Encoding': 'chunked',
        }),
        body: batchBody(),
        chunked: true,
        ...paced,
      })
      expect(chunked.status).toBe(413)
      expect(JSON.parse(chunked.body).error).toMatch(/^request body of \d+ bytes exceeds limit of \d+ bytes$/)
      expect(chunked.writtenBeforeAnswer).toBeLessThan(2 * BATCH_LIMIT_MB * MB)
      await expectHealthyAndClean()
    })

    it('/license/verify JSON, declared and chunked', async () => {
      const json = Buffer.from(JSON.stringify({ license_key: 'k'.repeat(10 * JSON_LIMIT) }))
      const declared = await rawRequest({
        port: server.port,
        head: head('/api/v1/license/verify', { 'X-API-Key': API_KEY, 'Content-Type': 'application/json', 'Content-Length': json.length }),
        body: pieces(json.length, 1024),
        paceMs: 5,
      })
      expect(declared.status).toBe(413)
      expect(JSON.parse(declared.body)).toEqual({ error: ERROR_TEXTS.requestTooLarge(json.length, JSON_LIMIT) })
      expect(declared.writtenBeforeAnswer).toBeLessThan(2 * JSON_LIMIT)

      const chunked = await rawRequest({
        port: server.port,
        head: head('/api/v1/license/verify', { 'X-API-Key': API_KEY, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' }),
        body: pieces(json.length, 1024),
        chunked: true,
        paceMs: 5,
      })
      expect(chunked.status).toBe(413)
      expect(JSON.parse(chunked.body).error).toMatch(/^request body of \d+ bytes exceeds limit of 8192 bytes$/)
      expect(chunked.writtenBeforeAnswer).toBeLessThan(2 * JSON_LIMIT)
      await expectHealthyAndClean()
    })
  })

  describe("early refusals reach Node's fetch (undici) as the contract's error, fixed length and streamed", () => {
    const bigForm = () => {
      const form = new FormData()
      form.set('file', new Blob([new Uint8Array(10 * LIMIT_MB * MB)]), 'big.glb')
      return form
    }
    /** The same request as a stream of unknown length (chunked), as an SDK streaming a file sends it. */
    const streamed = (form: FormData): RequestInit => {
      const encoded = new Response(form)
      return { body: encoded.body, headers: { 'Content-Type': encoded.headers.get('content-type')! }, duplex: 'half' } as RequestInit
    }
    const send = async (url: string, key: string, init: RequestInit) => {
      const response = await fetch(url, {
        method: 'POST',
        ...init,
        headers: { ...(init.headers as Record<string, string>), 'X-API-Key': key },
      })
      return { status: response.status, body: (await response.json()) as { error: string }, headers: response.headers }
    }

    // Variant A's 413, the SDK's typed error and the 400 from the headers are the shared upload cases'.
    it('402 (B): file over the tier limit', async () => {
      const fixed = await send(`${serverB.url}/api/v1/compress`, API_KEY, { body: bigForm() })
      expect(fixed.status).toBe(402)
      expect(fixed.body.error).toMatch(new RegExp(`^file size [\\d.]+MB exceeds limit of ${LIMIT_MB}MB for current license tier$`))
      const chunked = await send(`${serverB.url}/api/v1/compress`, API_KEY, streamed(bigForm()))
      expect(chunked.status).toBe(402)
      expect(chunked.body.error).toMatch(/^file size over [\d.]+MB exceeds limit/)
    })

    // On B: the shared upload cases send a wrong key to A, and failures count per process.
    it(`401 for a wrong key, then 429 with Retry-After after ${AUTH_FAILURES} wrong keys a minute from one address; a right key still works`, async () => {
      const statuses: number[] = []
      for (let attempt = 0; attempt < AUTH_FAILURES + 1; attempt++) {
        const answer = await send(
          `${serverB.url}/api/v1/compress`,
          `wrong-${attempt}`,
          attempt % 2 ? streamed(bigForm()) : { body: bigForm() },
        )
        statuses.push(answer.status)
        if (answer.status === 401) expect(answer.body).toEqual({ error: ERROR_TEXTS.unauthorized() })
        else {
          expect(answer.body).toEqual({ error: ERROR_TEXTS.authThrottled(AUTH_FAILURES) })
          expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0)
        }
      }
      // No other case of this file sends B a wrong key: the first AUTH_FAILURES are 401s.
      expect(statuses).toEqual([...Array(AUTH_FAILURES).fill(401), 429])
      const right = await fetch(`${serverB.url}/api/v1/capabilities`, { headers: { 'X-API-Key': API_KEY } })
      expect(right.status).toBe(200)
    })
  })

  it('Expect: 100-continue: a refused request gets its answer without 100, an accepted one gets 100 and runs', async () => {
    const upload = multipart({ name: 'box.glb', bytes: await readFile(paths.box) }, { engine: 'draco' })
    const total = upload.head.length + upload.file.length + upload.tail.length
    const refused = await rawRequest({
      port: serverB.port,
      head: head('/api/v1/compress', {
        'X-API-Key': API_KEY,
        'Content-Type': `multipart/form-data; boundary=${upload.boundary}`,
        'Content-Length': 50 * MB,
        Expect: '100-continue',
      }),
      body: [upload.head, upload.file, upload.tail],
      expectContinue: true,
    })
    expect(refused).toMatchObject({ status: 402, continued: false, writtenBeforeAnswer: 0 })
    // A boundary no body can match (not ASCII) is refused from the headers too.
    const foreignBoundary = await rawRequest({
      port: server.port,
      head: head('/api/v1/compress', {
        'X-API-Key': API_KEY,
        'Content-Type': 'multipart/form-data; boundary=Grenze-ü',
        'Content-Length': total,
        Expect: '100-continue',
      }),
      body: [upload.head, upload.file, upload.tail],
      expectContinue: true,
    })
    expect(foreignBoundary).toMatchObject({ status: 400, continued: false, writtenBeforeAnswer: 0 })
    const accepted = await rawRequest({
      port: server.port,
      head: head('/api/v1/compress', {
        'X-API-Key': API_KEY,
        'Content-Type': `multipart/form-data; boundary=${upload.boundary}`,
        'Content-Length': total,
        Expect: '100-continue',
      }),
      body: [upload.head, upload.file, upload.tail],
      expectContinue: true,
    })
    expect(accepted).toMatchObject({ status: 200, continued: true })
    expect(JSON.parse(accepted.body)).toMatchObject({ status: 'pending' })
  })

  it('headers: security headers everywhere, 405 with Allow, no CORS unless configured', async () => {
    const wrongMethod = await fetch(`${server.url}/api/v1/compress`, { headers: { 'X-API-Key': API_KEY } })
    expect(wrongMethod.status).toBe(405)
    expect(wrongMethod.headers.get('allow')).toBe('POST')
    expect(await wrongMethod.json()).toEqual({ error: ERROR_TEXTS.methodNotAllowed('GET', '/api/v1/compress') })
    for (const response of [wrongMethod, await fetch(`${server.url}/api/v1/health`), await fetch(`${server.url}/nowhere`)]) {
      expect(response.headers.get('x-content-type-options')).toBe('nosniff')
      expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
      expect(response.headers.get('referrer-policy')).toBe('no-referrer')
      expect(response.headers.get('access-control-allow-origin')).toBeNull()
    }
    // The listener's own refusals, given before any request reaches the app, carry the same headers.
    const names = [
      'x-content-type-options',
      'content-security-policy',
      'x-frame-options',
      'referrer-policy',
      'cross-origin-resource-policy',
    ]
    const health = await fetch(`${server.url}/api/v1/health`)
    const appHeaders = Object.fromEntries(names.map((name) => [name, health.headers.get(name)]))
    expect(appHeaders['x-content-type-options']).toBe('nosniff')
    const refusals = {
      400: await rawRequest({ port: server.port, head: 'BREW /pot HTCPCP/9\r\nGarbage' }),
      414: await rawRequest({ port: server.port, head: `GET /api/v1/health?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x` }),
      431: await rawRequest({ port: server.port, head: head('/api/v1/health', { 'X-Padding': 'p'.repeat(20_000) }) }),
      'no Host': await rawRequest({ port: server.port, head: 'GET /api/v1/health HTTP/1.1' }),
      417: await rawRequest({
        port: server.port,
        head: head('/api/v1/health', { 'Content-Length': 1, Expect: 'tea' }),
        body: [Buffer.from('x')],
      }),
      405: await rawRequest({ port: server.port, head: 'CONNECT 127.0.0.1:6379 HTTP/1.1\r\nHost: 127.0.0.1:6379' }),
    }
    for (const [refusal, answer] of Object.entries(refusals)) {
      expect([refusal, Object.fromEntries(names.map((name) => [name, answer.headers[name] ?? null]))]).toEqual([refusal, appHeaders])
    }
    // No request reached the app, which logs every request it answers: each is logged by the listener's caller.
    const refusalLines = () =>
      server
        .output()
        .split('\n')
        .filter((text) => text.startsWith('{') && text.includes('"answeredBy"'))
        .map((text) => JSON.parse(text) as Record<string, unknown>)
    const expected = [
      { msg: 'request', status: 400, answeredBy: 'http parser', error: expect.stringMatching(/^malformed request: invalid HTTP/) },
      { msg: 'request', status: 414, answeredBy: 'http parser', error: expect.stringContaining('the URL is too long') },
      { msg: 'request', status: 431, answeredBy: 'http parser', error: 'malformed request: headers too large' },
      {
        msg: 'request',
        status: 400,
        answeredBy: 'listener',
        method: 'GET',
        path: '/api/v1/health',
        error: expect.stringContaining('Host'),
      },
      { msg: 'request', status: 417, answeredBy: 'listener', method: 'POST', path: '/api/v1/health' },
      { msg: 'request', status: 405, answeredBy: 'listener', method: 'CONNECT', path: '127.0.0.1:6379' },
    ].map((line) => expect.objectContaining(line) as { asymmetricMatch(entry: unknown): boolean })
    const logged = await until(refusalLines, (lines) => expected.every((line) => lines.some((entry) => line.asymmetricMatch(entry))), 5_000)
    expect(logged).toEqual(expect.arrayContaining(expected))
    const preflight = await fetch(`${server.url}/api/v1/compress`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'POST' },
    })
    // With CORS off a preflight is just another method the route does not take.
    expect(preflight.status).toBe(405)
    expect(preflight.headers.get('allow')).toBe('POST')
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull()
    expect(await preflight.json()).toEqual({ error: ERROR_TEXTS.methodNotAllowed('OPTIONS', '/api/v1/compress') })
  })
})
