import { execFileSync } from 'node:child_process'
import { closeSync, constants, mkdirSync, openSync, writeSync } from 'node:fs'
import { lstat, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { connect, type Socket } from 'node:net'
import { dirname, join } from 'node:path'
import { EXTENSION_ERROR_TEXTS, EXTENSION_HEADERS, STOPPING_RETRY_AFTER_SECONDS } from '@mos/sdk/contract'
import { describe, expect, it } from 'vitest'
import { runtimeBinary } from '../../../scripts/runtime-binary.mjs'
import { corpusFiles, shared } from '../../../test/support/corpus.ts'
import { sleep, until } from '../../../test/support/poll.ts'
import { REDIS_URL, redisAvailable, removeRedisKeys, uniquePrefix } from '../../../test/support/redis.ts'
import { keyOwner } from '../src/tasks/task-owner.ts'
import { sha256Hex } from '../src/web-crypto.ts'
import { API_KEY, fetchMos, form, partFileOnDisk, tempDir, tree } from './support/harness.ts'
import { sharedRedisEnv, startMos, stopMos, stopMosGroup, type MosProcess } from './support/processes.ts'
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
async function begunRequest(
  port: number,
  head: string,
): Promise<{ finish(): Promise<ReturnType<typeof parseAnswer>>; closed(): Promise<ReturnType<typeof parseAnswer>> }> {
  const socket: Socket = connect(port, '127.0.0.1')
  socket.on('error', () => undefined)
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject))
  let received = ''
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')))
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  socket.write(`${head}\r\n`)
  const answer = async () => {
    const timer = setTimeout(() => socket.destroy(), 10_000)
    await closed
    clearTimeout(timer)
    return parseAnswer(received)
  }
  return {
    finish() {
      socket.write('\r\n')
      return answer()
    },
    /** Never ends the head: what the server sent by the time it closed the connection. */
    closed: answer,
  }
}

/** suzanne.obj uploaded for draco compression in `count` pieces 100 ms apart; resolves with the answer. */
async function pacedUpload(port: number, count: number): Promise<ReturnType<typeof parseAnswer>> {
  const model = await readFile(paths.suzanne)
  const boundary = 'mos-drain-boundary'
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="engine"\r\n\r\ndraco\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="suzanne.obj"\r\n\r\n`,
  )
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
  const body = Buffer.concat([head, model, tail])
  const size = Math.ceil(body.length / count)
  return rawRequest({
    port,
    head: `POST /api/v1/compress HTTP/1.1\r\nHost: mos\r\nX-API-Key: ${API_KEY}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${body.length}`,
    body: Array.from({ length: count }, (_, i) => body.subarray(i * size, (i + 1) * size)),
    paceMs: 100,
    timeoutMs: 20_000,
  })
}

/**
 * A record whose reads block until the returned descriptor is written and closed, as a records
 * folder on a network mount that stopped answering does: a FIFO at its path. Resolves once a
 * handler has it open to read (opening the writing end without waiting succeeds only then).
 */
async function storeThatStopsAnswering(path: string): Promise<number> {
  // Made before the first await, so the FIFO is there once the call returns: a request sent right
  // after it must find the record blocking, not missing (a 404 never opens it; seen under CI's load).
  mkdirSync(dirname(path), { recursive: true })
  execFileSync('mkfifo', [path])
  const writer = await until(
    () => {
      try {
        return openSync(path, constants.O_WRONLY | constants.O_NONBLOCK)
      } catch {
        return undefined
      }
    },
    (fd) => fd !== undefined,
    10_000,
    20,
  )
  if (writer === undefined) throw new Error(`no handler read ${path}`)
  return writer
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
      // 40 pieces 100 ms apart: about 4 s of upload, most of it after the SIGTERM below.
      const upload = pacedUpload(server.port, 40)
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

  it('a request without an answer when the grace ends gets 503 with Retry-After and Connection: close (still sending: fetch and a raw socket; whole, its handler at work), and nothing of its upload is left', async () => {
    const dir = await tempDir()
    const base = join(dir.path, 'data')
    const server = await startDraining('drain-refuse', base, 1_000)
    try {
      const boundary = 'mos-drain-refused'
      const head = `--${boundary}\r\nContent-Disposition: form-data; name="engine"\r\n\r\ndraco\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="endless.obj"\r\n\r\n`
      // An upload that never ends: a line of OBJ every 100 ms until the stream is cancelled.
      let timer: ReturnType<typeof setInterval> | undefined
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(head))
          timer = setInterval(() => {
            try {
              controller.enqueue(new TextEncoder().encode('v 0 0 0\n'))
            } catch {
              clearInterval(timer)
            }
          }, 100)
        },
        cancel: () => clearInterval(timer),
      })
      const upload = fetch(`${server.url}/api/v1/compress`, {
        method: 'POST',
        headers: { 'x-api-key': API_KEY, 'content-type': `multipart/form-data; boundary=${boundary}` },
        body,
        duplex: 'half',
      } as RequestInit)
      const slowHead = await begunRequest(server.port, 'GET /livez HTTP/1.1\r\nHost: mos')
      // A whole request whose handler is still at work when the grace ends: its task's record is a
      // FIFO, read as a records folder on a network mount that stopped answering is (the read blocks).
      // Opening its writing end without waiting succeeds only once the handler has it open to read.
      const stuckId = crypto.randomUUID()
      const stuck = join(base, 'records', 'tasks', stuckId)
      const stuckRead = storeThatStopsAnswering(stuck)
      const read = fetch(`${server.url}/api/v1/tasks/${stuckId}`, { headers: { 'x-api-key': API_KEY } })
      const writer = await stuckRead
      await partFileOnDisk(join(base, 'files'))
      server.child.kill('SIGTERM')

      const refusal = { error: 'service unavailable: the service stopped before the request arrived in full; send it again' }
      const answer = await upload
      clearInterval(timer)
      expect([answer.status, answer.headers.get('connection'), answer.headers.get('retry-after')]).toEqual([
        503,
        'close',
        String(STOPPING_RETRY_AFTER_SECONDS),
      ])
      expect(await answer.json()).toEqual(refusal)
      const raw = await slowHead.closed()
      expect([raw.status, raw.headers.connection, raw.headers['retry-after']]).toEqual([503, 'close', String(STOPPING_RETRY_AFTER_SECONDS)])
      expect(JSON.parse(raw.body)).toEqual(refusal)
      // The security headers of the app's answers (security-headers.ts), on the listener's own answers too.
      expect([answer.headers.get('x-content-type-options'), raw.headers['x-content-type-options']]).toEqual(['nosniff', 'nosniff'])
      const stopping = { error: 'service unavailable: this process is stopping; send the request again' }
      const abandoned = await read
      expect([abandoned.status, abandoned.headers.get('connection'), abandoned.headers.get('retry-after')]).toEqual([
        503,
        'close',
        String(STOPPING_RETRY_AFTER_SECONDS),
      ])
      expect(await abandoned.json()).toEqual(stopping)
      // The record's read ends (end of file), so its handler ends and writes its line.
      closeSync(writer)
      expect(await server.exited).toBe(0)
      await rm(stuck)
      // The head still arriving reached no handler: the listener's caller logs its 503.
      expect(logLines(server).find((line) => line.msg === 'request' && line.path === undefined)).toMatchObject({
        status: 503,
        answeredBy: 'shutdown grace over',
        error: refusal.error,
      })
      expect(logLines(server).find((line) => line.msg === 'request' && line.path === `/api/v1/tasks/${stuckId}`)).toMatchObject({
        status: 503,
        answeredBy: 'shutdown grace over',
        error: stopping.error,
      })
      // The upload's log line says what its client got, not the 400 its handler made of the cut body.
      expect(logLines(server).find((line) => line.msg === 'request' && line.path === '/api/v1/compress')).toMatchObject({
        status: 503,
        answeredBy: 'shutdown grace over',
        error: refusal.error,
        level: 'warn',
      })
      // No task folder, input, part file or record: only the empty folders that hold them.
      const left = [...(await tree(join(base, 'files'))), ...(await tree(join(base, 'records')))]
      expect(left.filter((path) => path !== 'tasks')).toEqual([])
      expect(server.output()).not.toMatch(/request handler failed|uncaught exception|unhandled rejection/)
    } finally {
      await stopMos(server, 5000)
      await dir.remove()
    }
  }, 60_000)

  /**
   * Runs `run` with a fresh data folder and a way to start draining processes on it (one after
   * another: a restart on the same data), then stops what it started and removes the folder.
   */
  async function onOneDataDir(run: (base: string, start: (name: string) => Promise<MosProcess>) => Promise<void>): Promise<void> {
    const dir = await tempDir()
    const base = join(dir.path, 'data')
    const started: MosProcess[] = []
    try {
      await run(base, async (name) => {
        started.push(await startDraining(name, base, 1_000))
        return started.at(-1)!
      })
    } finally {
      await stopMosGroup(started)
      await dir.remove()
    }
  }

  /** Submits suzanne.obj for draco compression, with `key` as its Idempotency-Key when given. */
  async function submitSuzanne(server: MosProcess, key?: string): Promise<Response> {
    return fetch(`${server.url}/api/v1/compress`, {
      method: 'POST',
      headers: { 'x-api-key': API_KEY, ...(key ? { [EXTENSION_HEADERS.idempotencyKey]: key } : {}) },
      body: await form({ engine: 'draco' }, [paths.suzanne]),
    })
  }

  /** The ids of the tasks the test key owns. */
  async function taskIds(server: MosProcess): Promise<string[]> {
    const list = (await (await fetchMos(server, '/api/v1/tasks')).json()) as { tasks: { task_id: string }[] }
    return list.tasks.map((task) => task.task_id)
  }

  it('a submit held after its upload was stored and before its task is recorded gets the 503 when the grace ends, and does nothing: its upload is removed, no task exists after a restart, and sent again it makes one', async () => {
    await onOneDataDir(async (base, start) => {
      const server = await start('drain-uncommitted')
      // The submit's Idempotency-Key is claimed after its upload is stored and before anything is
      // recorded: its record, on a store that stopped answering, holds the handler there.
      const key = 'drain-uncommitted'
      const claim = join(base, 'records', 'idempotency', await keyOwner(API_KEY), await sha256Hex(key))
      const claimRead = storeThatStopsAnswering(claim)
      const submit = submitSuzanne(server, key)
      const writer = await claimRead
      expect(
        (await tree(join(base, 'files'))).filter((path) => path.endsWith('/input')),
        'the upload is stored',
      ).toHaveLength(1)
      server.child.kill('SIGTERM')

      const refused = await submit
      expect([refused.status, refused.headers.get('connection'), refused.headers.get('retry-after')]).toEqual([
        503,
        'close',
        String(STOPPING_RETRY_AFTER_SECONDS),
      ])
      expect(await refused.json()).toEqual({ error: EXTENSION_ERROR_TEXTS.processStopping() })
      // The store answers again (no answer kept for the key): the handler goes on, finds the 503 sent
      // in its place, records nothing and removes its upload.
      closeSync(writer)
      expect(await server.exited).toBe(0)
      await rm(claim)
      const folders = ['tasks', 'idempotency', `idempotency/${await keyOwner(API_KEY)}`]
      const left = [...(await tree(join(base, 'files'))), ...(await tree(join(base, 'records')))]
      expect(left.filter((path) => !folders.includes(path))).toEqual([])

      const restarted = await start('drain-uncommitted-again')
      expect(await taskIds(restarted)).toEqual([])
      const again = await submitSuzanne(restarted, key)
      const { task_id } = (await again.json()) as { task_id: string }
      expect(again.headers.get(EXTENSION_HEADERS.idempotentReplayed)).toBeNull()
      expect(await taskIds(restarted)).toEqual([task_id])
    })
  }, 60_000)

  it('a submit recording its task when the grace ends is not answered 503 in its place: once its store answers it gets its task, which exists after a restart', async () => {
    await onOneDataDir(async (base, start) => {
      const server = await start('drain-committing')
      // With no licence a submit spends a trial file first, as it records its task: the trial
      // count, on a store that stopped answering, holds the handler there.
      const trial = join(base, 'records', 'license', 'trial')
      const trialRead = storeThatStopsAnswering(trial)
      const submit = submitSuzanne(server)
      let answered = false
      void submit.then(() => (answered = true))
      const writer = await trialRead
      server.child.kill('SIGTERM')
      // Twice the grace: an answer in the handler's place would have been sent by now.
      await sleep(2_000)
      expect(answered).toBe(false)
      writeSync(writer, JSON.stringify({ used_files: 0 }))
      closeSync(writer)

      const created = await submit
      expect(created.headers.get('connection')).toBe('close')
      const { task_id } = (await created.json()) as { task_id: string }
      expect(task_id).toMatch(/^[0-9a-f-]{36}$/)
      expect(await server.exited).toBe(0)
      expect(logLines(server).find((line) => line.waited !== undefined)).toMatchObject({ cut: 0, waited: 1 })

      const restarted = await start('drain-committing-again')
      expect(await taskIds(restarted)).toEqual([task_id])
    })
  }, 60_000)

  it('a DELETE held on its task record when the grace ends gets the 503 and, once its store answers, deletes nothing', async () => {
    await onOneDataDir(async (base, start) => {
      const server = await start('drain-delete')
      const taskId = crypto.randomUUID()
      const input = join(base, 'files', 'tasks', taskId, 'input')
      await mkdir(dirname(input), { recursive: true })
      await writeFile(input, await readFile(paths.suzanne))
      const record = join(base, 'records', 'tasks', taskId)
      const recordRead = storeThatStopsAnswering(record)
      const removal = fetchMos(server, `/api/v1/tasks/${taskId}`, { method: 'DELETE' })
      const writer = await recordRead
      server.child.kill('SIGTERM')

      const refused = await removal
      expect([refused.status, refused.headers.get('retry-after')]).toEqual([503, String(STOPPING_RETRY_AFTER_SECONDS)])
      expect(await refused.json()).toEqual({ error: EXTENSION_ERROR_TEXTS.processStopping() })
      // The store answers again with the task, pending: the handler finds the 503 sent in its place
      // before it cancels and removes anything.
      const pending = {
        task_id: taskId,
        type: 'compress',
        status: 'pending',
        input_filename: 'suzanne.obj',
        input_size_bytes: (await stat(input)).size,
        created_at: new Date().toISOString(),
        owner: await keyOwner(API_KEY),
        job: { inputKey: `tasks/${taskId}/input`, format: 'obj', options: { engine: 'draco' }, attempts: 0 },
      }
      writeSync(writer, JSON.stringify(pending))
      closeSync(writer)
      expect(await server.exited).toBe(0)
      // A cancel would have written the record in place of the FIFO; a removal, removed it and the input.
      expect((await lstat(record)).isFIFO()).toBe(true)
      expect((await stat(input)).size).toBe(pending.input_size_bytes)
      expect(logLines(server).find((line) => line.msg === 'request' && line.method === 'DELETE')).toMatchObject({
        status: 503,
        answeredBy: 'shutdown grace over',
      })
      await rm(record)
    })
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

const hasRedis = await redisAvailable()
const required = process.env.REQUIRE_CORPUS === '1'

/**
 * The API role on Deno and Bun (their own servers, fetch-listener.ts) drains as Node does. Before,
 * Bun's stop waited for requests in flight with no bound, and Deno's shutdown cut the body of every
 * upload in flight at once (`malformed request: the request body ended …`, denoland/deno#36809).
 * Under REQUIRE_CORPUS=1 a missing binary is not skipped: starting the process fails the tests.
 */
for (const runtime of ['deno', 'bun'] as const) {
  describe.skipIf(!available || !hasRedis || (!runtimeBinary(runtime) && !required))(
    `the API role on ${runtime}: SIGTERM drains; a stalled body's 408 closes`,
    () => {
      /**
       * Runs `run` against an API process on `runtime` (Redis records and queue, files in a folder) with
       * `graceMs` to drain, then stops it and removes its keys and files.
       */
      async function withApi(
        name: string,
        graceMs: number,
        run: (api: { server: MosProcess; files: string }) => Promise<void>,
        extra: Record<string, string> = {},
      ): Promise<void> {
        const dir = await tempDir()
        const prefix = uniquePrefix(`drain-${runtime}`)
        const env = sharedRedisEnv({ redisUrl: REDIS_URL, prefix, dataDir: dir.path, apiKeys: API_KEY })
        const server = await startMos(
          `${runtime}-${name}`,
          {
            ...env,
            SERVICE__SERVER__ROLE: 'api',
            SERVICE__SERVER__SHUTDOWN_GRACE_MS: String(graceMs),
            SERVICE__LOG__FORMAT: 'json',
            ...extra,
          },
          60_000,
          { runtime },
        )
        try {
          await run({ server, files: join(dir.path, 'shared/files') })
        } finally {
          await stopMos(server, 5000)
          await removeRedisKeys(prefix)
          await dir.remove()
        }
      }

      it('an upload in flight finishes within the grace and gets its task (Connection: close); /readyz says stopping; then exit 0', async () => {
        await withApi('drain', 8_000, async (api) => {
          // 30 pieces 100 ms apart: about 3 s of upload, most of it after the SIGTERM.
          const upload = pacedUpload(api.server.port, 30)
          await partFileOnDisk(api.files)
          // Bun closes its listener at once: the probe is asked on a connection open before. Deno keeps
          // its listener while an upload is in flight (its shutdown would cut the body), and a new
          // request with a body is told to go elsewhere, its body unread.
          const begun = runtime === 'bun' ? await begunRequest(api.server.port, 'GET /readyz HTTP/1.1\r\nHost: mos') : undefined
          await sleep(200)
          api.server.child.kill('SIGTERM')
          await until(
            () => api.server.output(),
            (text) => text.includes('SIGTERM: finishing requests in flight'),
            5_000,
            20,
          )
          const ready = begun
            ? await begun.finish()
            : await rawRequest({ port: api.server.port, head: 'GET /readyz HTTP/1.1\r\nHost: mos' })
          expect(ready.status).toBe(503)
          expect(JSON.parse(ready.body)).toMatchObject({ status: 'stopping', failed: ['stopping'] })
          if (runtime === 'bun') expect(await until(() => refused(api.server.port), Boolean, 5_000, 20)).toBe(true)
          else {
            const late = await rawRequest({
              port: api.server.port,
              head: 'POST /api/v1/compress HTTP/1.1\r\nHost: mos\r\nContent-Length: 5',
              body: [Buffer.from('hello')],
            })
            expect(late.status).toBe(503)
            // With the security headers of the app's answers (security-headers.ts), though the app never saw it.
            expect(late.headers).toMatchObject({
              connection: 'close',
              'retry-after': String(STOPPING_RETRY_AFTER_SECONDS),
              'x-content-type-options': 'nosniff',
            })
            expect(JSON.parse(late.body)).toEqual({ error: 'service unavailable: this process is stopping; send the request again' })
            // It never reached the app (and its request log): the listener's caller logs it.
            expect(
              await until(() => logLines(api.server).find((line) => line.msg === 'request' && line.answeredBy === 'drain'), Boolean, 5_000),
            ).toMatchObject({ status: 503, method: 'POST', path: '/api/v1/compress', error: JSON.parse(late.body).error })
          }

          const answer = await upload
          expect(answer.headers.connection).toBe('close')
          expect(JSON.parse(answer.body) as unknown, answer.body).toMatchObject({ task_id: expect.stringMatching(/^[0-9a-f-]{36}$/) })
          expect(await api.server.exited).toBe(0)
          expect(logLines(api.server).find((line) => line.msg === 'requests in flight finished')).toMatchObject({ cut: 0 })
        })
      }, 60_000)

      it('an upload longer than the grace is cut when it is over, its part file removed, and the process exits 0', async () => {
        await withApi('grace', 1_500, async (api) => {
          // About 4 s of upload, past the 1.5 s grace.
          const upload = pacedUpload(api.server.port, 40)
          await partFileOnDisk(api.files)
          const signalled = Date.now()
          api.server.child.kill('SIGTERM')
          expect(await api.server.exited).toBe(0)
          expect(Date.now() - signalled).toBeLessThan(4_000)
          expect((await upload).status).toBe(0)
          expect(logLines(api.server).find((line) => line.cut !== undefined)).toMatchObject({
            cut: 1,
            msg: expect.stringContaining('shutdown grace of 1500 ms over: 1 request still in flight cut'),
          })
          expect((await tree(api.files)).filter((path) => path.endsWith('.part'))).toEqual([])
        })
      }, 60_000)

      it('a second SIGTERM during the drain stops at once (143)', async () => {
        await withApi('twice', 30_000, async (api) => {
          const upload = pacedUpload(api.server.port, 40)
          await partFileOnDisk(api.files)
          api.server.child.kill('SIGTERM')
          await sleep(300)
          api.server.child.kill('SIGTERM')
          expect(await api.server.exited).toBe(143)
          expect(logLines(api.server).map((line) => line.msg)).toContainEqual(expect.stringContaining('SIGTERM again: stopping now'))
          await upload
        })
      }, 60_000)

      // Deno sends the header but keeps a connection whose body has not all arrived until the client
      // closes it (docs/deployment.md): nothing an answer says makes it close.
      it.skipIf(runtime === 'deno')(
        'a body that stalls gets the 408 with Connection: close, and the server closes the connection',
        async () => {
          await withApi(
            'stall',
            1_000,
            async (api) => {
              const socket = connect(api.server.port, '127.0.0.1')
              socket.on('error', () => undefined)
              let received = ''
              socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')))
              const closed = new Promise<boolean>((resolve) => {
                const timer = setTimeout(() => resolve(false), 8_000)
                socket.once('close', () => {
                  clearTimeout(timer)
                  resolve(true)
                })
              })
              socket.write(
                `POST /api/v1/compress HTTP/1.1\r\nHost: mos\r\nX-API-Key: ${API_KEY}\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000\r\n\r\n--b\r\n`,
              )
              expect(await closed).toBe(true)
              socket.destroy()
              const answer = parseAnswer(received)
              expect(answer.status).toBe(408)
              expect(answer.headers.connection).toBe('close')
              expect(JSON.parse(answer.body)).toEqual({ error: 'malformed request: no byte of the request body arrived for 1 second' })
            },
            { SERVICE__SERVER__BODY_IDLE_TIMEOUT_MS: '1000' },
          )
        },
        30_000,
      )
    },
  )
}
