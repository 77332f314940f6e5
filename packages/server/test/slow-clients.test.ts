import { readdir, readFile } from 'node:fs/promises'
import { connect } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sleep, until } from '../../../test/support/poll.ts'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { throwAwayLicenceEnv } from '../../../test/support/service-env.ts'
import { API_KEY, tempDir } from './support/harness.ts'
import { startMos, stopMos, type MosProcess } from './support/processes.ts'
import { multipart, rawRequest } from './support/raw-http.ts'

const { available, paths } = corpusFiles({ box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb') })

/** The body idle bound of the server under test: small, so a stall is seen in a second. */
const IDLE_MS = 1000
/** Its bound on a request's line and headers, the least taken. */
const HEADERS_MS = 1000
/** Its keep-alive time: above the header bound, so an idle connection shows it is not cut by that bound. */
const KEEP_ALIVE_MS = 3000

interface SocketOutcome {
  /** Everything the server sent. */
  answer: string
  /** Whether the server ended the connection (the socket closed before our own deadline). */
  closedByServer: boolean
}

/**
 * Writes `parts` on a raw socket (each a write of its own), then optionally shuts our side
 * (`socket.end()`, a half-close), and reads until the server closes or `deadlineMs` passes.
 */
async function exchange(port: number, parts: (string | Uint8Array)[], options: { halfClose?: boolean; deadlineMs?: number } = {}) {
  const socket = connect({ port, host: '127.0.0.1' })
  socket.on('error', () => undefined)
  await new Promise((resolve) => socket.once('connect', resolve))
  let answer = Buffer.alloc(0)
  socket.on('data', (chunk: Buffer) => (answer = Buffer.concat([answer, chunk])))
  const closed = new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), options.deadlineMs ?? 10_000)
    socket.once('close', () => {
      clearTimeout(timer)
      resolve(true)
    })
  })
  for (const part of parts) socket.write(part)
  if (options.halfClose) socket.end()
  const closedByServer = await closed
  socket.destroy()
  return { answer: answer.toString('utf8'), closedByServer } satisfies SocketOutcome
}

/** The JSON body of a raw answer (chunked or not). */
function jsonOf(answer: string): unknown {
  const body = answer.slice(answer.indexOf('\r\n\r\n') + 4)
  const chunked = /transfer-encoding: chunked/i.test(answer.slice(0, answer.indexOf('\r\n\r\n')))
  return JSON.parse(chunked ? body.split('\r\n')[1]! : body)
}

describe.skipIf(!available)('slow, stalled and half-closed clients against the real server', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let server: MosProcess
  let box: Uint8Array
  const uploads = () => readdir(join(dir.path, 'files/tasks'), { recursive: true }).catch(() => [] as string[])
  const compressHead = (boundary: string, length: number, extra: string[] = []) =>
    [
      'POST /api/v1/compress HTTP/1.1',
      `Host: 127.0.0.1:${server.port}`,
      `X-API-Key: ${API_KEY}`,
      `Content-Type: multipart/form-data; boundary=${boundary}`,
      `Content-Length: ${length}`,
      ...extra,
      '',
      '',
    ].join('\r\n')

  beforeAll(async () => {
    dir = await tempDir()
    box = await readFile(paths.box)
    server = await startMos('slow-clients', {
      SERVICE__AUTH__API_KEYS: API_KEY,
      SERVICE__SERVER__HOST: '127.0.0.1',
      SERVICE__SERVER__PORT: '0',
      SERVICE__SERVER__RATE_LIMIT_PER_MINUTE: '1000000',
      SERVICE__SERVER__BODY_IDLE_TIMEOUT_MS: String(IDLE_MS),
      SERVICE__SERVER__KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_MS),
      SERVICE__SERVER__HEADERS_TIMEOUT_MS: String(HEADERS_MS),
      SERVICE__ENGINES__THREADS: '1',
      SERVICE__ENGINES__PRESTART: 'false',
      SERVICE__STORAGE__FS__BASE: dir.path,
      ...throwAwayLicenceEnv(),
    })
  }, 120_000)
  afterAll(async () => {
    await stopMos(server, 5000)
    expect(server.output()).not.toMatch(/uncaught exception|unhandled rejection|request handler failed/)
    await dir?.remove()
  })

  it(`an upload that stops sending gets 408 after ${IDLE_MS} ms idle, its connection closed and its partial file removed; the next request is served`, async () => {
    const upload = multipart({ name: 'box.glb', bytes: box }, { engine: 'draco' })
    const length = upload.head.length + upload.file.length + upload.tail.length
    // Half the file, then silence: the file is open in the store when the bound strikes.
    const sent = exchange(server.port, [compressHead(upload.boundary, length), upload.head, upload.file.subarray(0, box.length / 2)])
    const during = await until(uploads, (files) => files.length > 0, 5000, 20)
    expect(during.length).toBeGreaterThan(0)
    const { answer, closedByServer } = await sent
    expect(answer).toMatch(/^HTTP\/1\.1 408 /)
    expect(answer).toMatch(/\r\nconnection: close\r\n/i)
    expect(jsonOf(answer)).toEqual({ error: 'malformed request: no byte of the request body arrived for 1 second' })
    expect(closedByServer).toBe(true)
    expect(await until(uploads, (files) => files.length === 0, 5000)).toEqual([])
    const health = await fetch(`${server.url}/api/v1/health`)
    expect(await health.json()).toMatchObject({ status: 'ok' })
  })

  it('a JSON body that stops sending gets the same 408', async () => {
    const head = [
      'POST /api/v1/license/verify HTTP/1.1',
      'Host: x',
      `X-API-Key: ${API_KEY}`,
      'Content-Type: application/json',
      'Content-Length: 40',
      '',
      '{"license_key": "',
    ].join('\r\n')
    const { answer, closedByServer } = await exchange(server.port, [head])
    expect(answer).toMatch(/^HTTP\/1\.1 408 /)
    expect(jsonOf(answer)).toEqual({ error: 'malformed request: no byte of the request body arrived for 1 second' })
    expect(closedByServer).toBe(true)
  })

  it('a client that half-closes its socket mid-body: its request can never complete, so 400 saying so, and nothing of it is kept', async () => {
    const upload = multipart({ name: 'box.glb', bytes: box }, { engine: 'draco' })
    const length = upload.head.length + upload.file.length + upload.tail.length
    const { answer, closedByServer } = await exchange(
      server.port,
      [compressHead(upload.boundary, length), upload.head, upload.file.subarray(0, 1000)],
      { halfClose: true },
    )
    expect(answer).toMatch(/^HTTP\/1\.1 400 /)
    expect(jsonOf(answer)).toEqual({ error: 'malformed request: the request ended before it was complete' })
    expect(closedByServer).toBe(true)
    // Run before any upload is taken, so the data folder holds nothing else.
    expect(await until(uploads, (files) => files.length === 0, 5000)).toEqual([])
  })

  describe(`request headers have ${HEADERS_MS} ms from their first byte, with no clock on the whole request`, () => {
    it('headers trickled a byte every 100 ms get 408 saying so once the bound passes, and the connection closes', async () => {
      const head = `GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-API-Key: ${API_KEY}\r\nX-Slow: ${'s'.repeat(100)}`
      const socket = connect({ port: server.port, host: '127.0.0.1' })
      socket.on('error', () => undefined)
      await new Promise((resolve) => socket.once('connect', resolve))
      let answer = ''
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')))
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
      const started = Date.now()
      // Node checked the bound every 30 s: 5 s is the deadline of a bound kept within itself and a little.
      for (let sent = 0; sent < head.length && !socket.destroyed && Date.now() - started < 5000; sent++) {
        socket.write(head[sent]!)
        await sleep(100)
      }
      await closed
      const elapsed = Date.now() - started
      expect(answer).toMatch(/^HTTP\/1\.1 408 /)
      expect(answer).toMatch(/\r\nconnection: close\r\n/i)
      // The security headers of the app's answers (security-headers.ts), on the listener's own answer too.
      expect(answer).toMatch(/\r\nx-content-type-options: nosniff\r\n/i)
      expect(jsonOf(answer)).toEqual({ error: "malformed request: the request's line and headers did not arrive within 1 second" })
      expect(elapsed).toBeGreaterThanOrEqual(HEADERS_MS - 100)
      expect(elapsed).toBeLessThan(HEADERS_MS + 1500)
    })

    it('a connection that sends nothing is closed without an answer once the bound passes (it asked nothing)', async () => {
      const started = Date.now()
      const { answer, closedByServer } = await exchange(server.port, [], { deadlineMs: 5000 })
      expect(closedByServer).toBe(true)
      expect(answer).toBe('')
      expect(Date.now() - started).toBeLessThan(HEADERS_MS + 1500)
    })

    it('an idle keep-alive connection is not held to the header bound: a request after it is served on the same connection', async () => {
      const get = `GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n`
      const socket = connect({ port: server.port, host: '127.0.0.1' })
      socket.on('error', () => undefined)
      await new Promise((resolve) => socket.once('connect', resolve))
      let answer = ''
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')))
      socket.write(get)
      await until(
        () => answer,
        (text) => text.includes('"status":"ok"'),
        5000,
      )
      await sleep(HEADERS_MS * 1.5)
      expect(socket.destroyed).toBe(false)
      socket.write(get)
      const both = await until(
        () => answer,
        (text) => text.split('"status":"ok"').length === 3,
        5000,
      )
      expect([...both.matchAll(/HTTP\/1\.1 200 /g)]).toHaveLength(2)
      socket.destroy()
    })
  })

  it(`an upload that keeps sending, a piece every ${IDLE_MS * 0.3} ms for several times the idle bound, is taken`, async () => {
    const upload = multipart({ name: 'box.glb', bytes: box }, { engine: 'draco' })
    const body = Buffer.concat([upload.head, upload.file, upload.tail])
    const pieces = Array.from({ length: 12 }, (_, i) =>
      body.subarray(Math.floor((i * body.length) / 12), Math.floor(((i + 1) * body.length) / 12)),
    )
    const answer = await rawRequest({
      port: server.port,
      head: compressHead(upload.boundary, body.length).trimEnd(),
      body: pieces,
      paceMs: IDLE_MS * 0.3,
    })
    expect(answer.status).toBe(200)
    expect(JSON.parse(answer.body)).toMatchObject({ task_id: expect.stringMatching(/^[0-9a-f-]{36}$/), status: 'pending' })
  })

  describe('a client that half-closes its socket after its request (socket.end()) gets its answer', () => {
    it('a good upload: its task', async () => {
      const upload = multipart({ name: 'box.glb', bytes: box }, { engine: 'draco' })
      const body = Buffer.concat([upload.head, upload.file, upload.tail])
      const { answer, closedByServer } = await exchange(server.port, [compressHead(upload.boundary, body.length), body], {
        halfClose: true,
      })
      expect(answer).toMatch(/^HTTP\/1\.1 200 /)
      // The answer is the connection's last, and says so: a client reading `keep-alive` would reuse it.
      expect(answer).toMatch(/\r\nconnection: close\r\n/i)
      expect(answer).not.toMatch(/keep-alive/i)
      expect(jsonOf(answer)).toMatchObject({ task_id: expect.stringMatching(/^[0-9a-f-]{36}$/), status: 'pending' })
      expect(closedByServer).toBe(true)
    })

    it("a bad upload: the contract's error", async () => {
      const upload = multipart({ name: 'box.glb', bytes: box })
      const body = Buffer.concat([upload.head, upload.file, upload.tail])
      const { answer, closedByServer } = await exchange(server.port, [compressHead(upload.boundary, body.length), body], {
        halfClose: true,
      })
      expect(answer).toMatch(/^HTTP\/1\.1 400 /)
      expect(answer).toMatch(/\r\nconnection: close\r\n/i)
      expect(jsonOf(answer)).toEqual({ error: 'missing required field: engine' })
      expect(closedByServer).toBe(true)
    })

    it('two pipelined requests: both answers, in order', async () => {
      const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${API_KEY}\r\n\r\n`
      const { answer, closedByServer } = await exchange(server.port, [get('/api/v1/health') + get('/api/v1/tasks/nope')], {
        halfClose: true,
      })
      const statuses = [...answer.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => match[1])
      expect(statuses).toEqual(['200', '404'])
      // The first answer keeps the connection for the second; the second, the last, closes it.
      const connections = [...answer.matchAll(/\r\nconnection: ([\w-]+)\r\n/gi)].map((match) => match[1]!.toLowerCase())
      expect(connections).toEqual(['keep-alive', 'close'])
      expect(answer).toContain('{"error":"task not found: nope"}')
      expect(closedByServer).toBe(true)
    })
  })
})
