import { readFile } from 'node:fs/promises'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { corpusFiles, shared } from '../../../test/support/corpus.ts'
import { sleep, until } from '../../../test/support/poll.ts'
import { API_KEY, partFileOnDisk, tempDir, tree } from './support/harness.ts'
import { startMos, stopMos, type MosProcess } from './support/processes.ts'
import { parseAnswer, rawRequest } from './support/raw-http.ts'

/**
 * SIGTERM drains the requests in flight for SERVICE__SERVER__SHUTDOWN_GRACE_MS: they finish and get
 * their answers, while no new connection is accepted and /readyz says the process is stopping.
 * The grace cut them after 2 s whatever the setting, so every rolling deploy cut the uploads in
 * flight. The bound of the grace: crash.test.ts, "SIGTERM mid-upload".
 */
const { available, paths } = corpusFiles({ suzanne: shared('obj', 'suzanne.obj') })

/** A single-node process on fs storage, logging JSON, whose requests in flight get `graceMs` once told to stop. */
async function startDraining(name: string, base: string, graceMs: number): Promise<MosProcess> {
  return startMos(name, {
    SERVICE__AUTH__API_KEYS: API_KEY,
    SERVICE__SERVER__HOST: '127.0.0.1',
    SERVICE__SERVER__PORT: '0',
    SERVICE__SERVER__SHUTDOWN_GRACE_MS: String(graceMs),
    SERVICE__STORAGE__FS__BASE: base,
    SERVICE__ENGINES__THREADS: '1',
    SERVICE__ENGINES__PRESTART: 'false',
    SERVICE__LOG__FORMAT: 'json',
  })
}

/** Whether a new connection to `port` is refused (the listener closed). */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(false)
    })
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'))
  })
}

/**
 * A request whose headers are sent but for the blank line that ends them: the server holds its
 * connection as one with a request in flight, which a drain keeps open. `finish` sends the rest and
 * reads the answer until the server closes the connection.
 */
async function begunRequest(port: number, head: string): Promise<{ finish(): Promise<ReturnType<typeof parseAnswer>> }> {
  const socket: Socket = connect(port, '127.0.0.1')
  socket.on('error', () => undefined)
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject))
  let received = ''
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')))
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  socket.write(`${head}\r\n`)
  return {
    async finish() {
      socket.write('\r\n')
      const timer = setTimeout(() => socket.destroy(), 10_000)
      await closed
      clearTimeout(timer)
      return parseAnswer(received)
    },
  }
}

/** The JSON lines the process wrote. */
function logLines(server: MosProcess): Record<string, unknown>[] {
  return server
    .output()
    .split('\n')
    .filter((text) => text.startsWith('{'))
    .map((text) => JSON.parse(text) as Record<string, unknown>)
}

describe.skipIf(!available)('single node: SIGTERM drains requests in flight', () => {
  it('an upload paced past 2 s but within the grace gets its task, answered with Connection: close', async () => {
    const dir = await tempDir()
    const base = join(dir.path, 'data')
    const server = await startDraining('drain-upload', base, 8_000)
    try {
      const model = await readFile(paths.suzanne)
      const boundary = 'mos-drain-boundary'
      const head = Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="engine"\r\n\r\ndraco\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="suzanne.obj"\r\n\r\n`,
      )
      const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
      const body = Buffer.concat([head, model, tail])
      // 40 pieces 100 ms apart: about 4 s of upload, most of it after the SIGTERM below.
      const size = Math.ceil(body.length / 40)
      const pieces = Array.from({ length: 40 }, (_, i) => body.subarray(i * size, (i + 1) * size))
      const upload = rawRequest({
        port: server.port,
        head: `POST /api/v1/compress HTTP/1.1\r\nHost: mos\r\nX-API-Key: ${API_KEY}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${body.length}`,
        body: pieces,
        paceMs: 100,
        timeoutMs: 20_000,
      })
      const files = join(base, 'files')
      await partFileOnDisk(files)
      server.child.kill('SIGTERM')

      const answer = await upload
      expect(answer.headers.connection).toBe('close')
      const taskId = (JSON.parse(answer.body) as { task_id?: string }).task_id
      expect(taskId, answer.body).toMatch(/^[0-9a-f-]{36}$/)
      expect(await server.exited).toBe(0)
      expect((await tree(join(base, 'records'))).some((path) => path.includes(taskId!))).toBe(true)
      expect(logLines(server).find((line) => line.msg === 'requests in flight finished')).toMatchObject({ cut: 0 })
    } finally {
      await stopMos(server, 5000)
      await dir.remove()
    }
  }, 60_000)

  it('during the drain /readyz answers 503 stopping, /livez alive, and a new connection is refused', async () => {
    const dir = await tempDir()
    const server = await startDraining('drain-probes', join(dir.path, 'data'), 8_000)
    try {
      const ready = await begunRequest(server.port, 'GET /readyz HTTP/1.1\r\nHost: mos')
      const live = await begunRequest(server.port, 'GET /livez HTTP/1.1\r\nHost: mos')
      await sleep(200) // both request lines are read: their connections are in flight, not idle
      server.child.kill('SIGTERM')
      expect(await until(() => refused(server.port), Boolean, 5_000, 20)).toBe(true)

      const readiness = await ready.finish()
      expect(readiness.status).toBe(503)
      expect(readiness.headers.connection).toBe('close')
      expect(JSON.parse(readiness.body)).toMatchObject({
        status: 'stopping',
        failed: ['stopping'],
        checks: { stopping: { ok: false, error: expect.stringContaining('the process is stopping') } },
      })
      const liveness = await live.finish()
      expect(liveness.status).toBe(200)
      expect(JSON.parse(liveness.body)).toMatchObject({ status: 'alive' })
      expect(await server.exited).toBe(0)
    } finally {
      await stopMos(server, 5000)
      await dir.remove()
    }
  }, 60_000)

  it('a second SIGTERM during the drain stops at once, cutting what was in flight', async () => {
    const dir = await tempDir()
    const server = await startDraining('drain-twice', join(dir.path, 'data'), 30_000)
    try {
      // A request that never finishes its headers holds the drain for its whole 30 s grace.
      await begunRequest(server.port, 'GET /livez HTTP/1.1\r\nHost: mos')
      await sleep(200)
      server.child.kill('SIGTERM')
      expect(await until(() => refused(server.port), Boolean, 5_000, 20)).toBe(true)
      server.child.kill('SIGTERM')
      expect(await server.exited).toBe(143)
      expect(logLines(server).map((line) => line.msg)).toContainEqual(expect.stringContaining('SIGTERM again: stopping now'))
    } finally {
      await stopMos(server, 5000)
      await dir.remove()
    }
  }, 60_000)
})
