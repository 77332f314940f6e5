import { existsSync, watch } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sleep, until } from '../../../test/support/poll.ts'
import { writeBigMesh } from './support/big-mesh.ts'
import { completedTaskSchema, STOPPING_RETRY_AFTER_SECONDS, submitResponseSchema } from '@mos/sdk/contract'
import { API_KEY, fetchMos, form, partFileOnDisk, tempDir, tree, waitForTask } from './support/harness.ts'
import { startMos, stopMos, type MosProcess } from './support/processes.ts'

/** Sends `body` to compress as it is pulled; settles with the answer, or the error of a connection cut. */
function streamUpload(url: string, boundary: string, body: ReadableStream<Uint8Array>): Promise<Response | Error> {
  return fetch(`${url}/api/v1/compress`, {
    method: 'POST',
    headers: { 'X-API-Key': API_KEY, 'content-type': `multipart/form-data; boundary=${boundary}` },
    body,
    duplex: 'half',
  } as RequestInit).catch((error: Error) => error)
}

/** One process on `base`, with one engine thread and an orphan age of about a second: what a kill leaves is swept at once. */
const killedNodeEnv = (base: string) => ({
  SERVICE__AUTH__API_KEYS: API_KEY,
  SERVICE__SERVER__HOST: '127.0.0.1',
  // The polling below is far above the contract's 60 requests a minute.
  SERVICE__SERVER__RATE_LIMIT_PER_MINUTE: '1000000',
  SERVICE__SERVER__PORT: '0',
  SERVICE__STORAGE__FS__BASE: base,
  SERVICE__ENGINES__THREADS: '1',
  SERVICE__STORAGE__ORPHAN_UPLOAD_MINUTES: '0.02',
})

/**
 * Starts a process on `base`, converts `mesh` (the big grid) to OBJ (tens of MB of text: its write takes far
 * longer than the kill) and kills the process the moment a file other than the input appears in the
 * task's folder, its write under way. Returns what the kill left there.
 */
async function killMidResultWrite(base: string, mesh: string, round: number) {
  const env = killedNodeEnv(base)
  const killed = await startMos(`write-${round}`, env)
  const response = await fetchMos(killed, '/api/v1/convert', { method: 'POST', body: await form({ target_format: 'obj' }, [mesh]) })
  const id = submitResponseSchema.parse(await response.json()).task_id
  const folder = join(base, 'files', 'tasks', id)
  const watcher = watch(folder, (_event, name) => {
    if (name !== 'input') killed.child.kill('SIGKILL')
  })
  try {
    expect(await killed.exited).toBe('SIGKILL')
  } finally {
    watcher.close()
  }
  return { env, id, folder, left: await tree(folder) }
}

describe('single node: a process killed with SIGKILL (fs storage)', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let bigMesh: string
  let server: MosProcess | undefined
  beforeAll(async () => {
    dir = await tempDir()
    bigMesh = join(dir.path, 'big.glb')
    await writeBigMesh(bigMesh, 600)
  })
  afterAll(async () => {
    await stopMos(server, 5000)
    await dir.remove()
  })

  it('mid-upload: shows no task, and the sweep of the next start removes the half-written upload', async () => {
    const base = join(dir.path, 'data')
    const env = killedNodeEnv(base)
    server = await startMos('all-1', env)
    const bytes = new Uint8Array(await readFile(bigMesh))
    const boundary = 'mos-crash-boundary'
    const head = new TextEncoder().encode(
      `--${boundary}\r\nContent-Disposition: form-data; name="engine"\r\n\r\ndraco\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.glb"\r\n\r\n`,
    )
    let sent = 0
    const half = Math.floor(bytes.length / 2)
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (sent === 0) controller.enqueue(head)
        if (sent >= half) return new Promise(() => undefined) // stalls: the process dies before the rest
        const chunk = bytes.subarray(sent, Math.min(half, sent + 1024 * 1024))
        sent += chunk.byteLength
        controller.enqueue(chunk)
      },
    })
    const upload = streamUpload(server.url, boundary, body)

    // Wait until the half is on disk as an unfinished part file, then kill the process.
    const files = join(base, 'files')
    await partFileOnDisk(files)
    await sleep(300)
    server.child.kill('SIGKILL')
    expect(await server.exited).toBe('SIGKILL')
    expect(await upload).toBeInstanceOf(Error)

    // No record, no file under a task key: only the unfinished part.
    expect(await tree(join(base, 'records'))).toEqual([])
    const left = await tree(files)
    expect(left.filter((path) => path.endsWith('.part'))).toHaveLength(1)
    expect(left.filter((path) => /(^|\/)(input|output)$/.test(path))).toEqual([])

    // The next start (single node) sweeps it once it is older than the orphan age.
    server = await startMos('all-2', env)
    const taskFolder = join(files, 'tasks', left.find((path) => path.split('/').length === 2)!.split('/')[1]!)
    const gone = Date.now() + 30_000
    while (existsSync(taskFolder)) {
      if (Date.now() > gone) throw new Error(`orphan upload still there: ${(await tree(files)).join(', ')}`)
      await sleep(200)
    }
    expect(await tree(join(files, 'tasks'))).toEqual([])
  })

  /**
   * The engine thread wrote its result straight to the task's output key: a process killed mid-write
   * left a truncated `output` where the finished result is looked for (a retry or a download met it).
   * It writes to a part file beside it and renames it into place; the sweep removes a part file a
   * killed write left in a task that has a record, once older than the orphan age.
   */
  it('mid-result-write: leaves no file at the output key; the next start runs the task again and sweeps the part file', async () => {
    await stopMos(server, 5000)
    // A kill that comes after the write is done shows nothing: such a round is run again, on a fresh folder.
    let caught: Awaited<ReturnType<typeof killMidResultWrite>> | undefined
    const rounds: string[][] = []
    for (let round = 1; round <= 3 && !caught; round++) {
      const killed = await killMidResultWrite(join(dir.path, `data-result-${round}`), bigMesh, round)
      rounds.push(killed.left)
      if (killed.left.some((name) => name.endsWith('.part'))) caught = killed
    }
    // Without the part file (the thread wrote the output key itself), no round could leave one.
    expect(caught, `no kill landed during a result write: ${JSON.stringify(rounds)}`).toBeDefined()
    const { env, id, folder, left } = caught!
    expect(left).not.toContain('output')
    expect(left.filter((name) => name.endsWith('.part'))).toHaveLength(1)

    server = await startMos('write-after', env)
    const mos = server
    const record = completedTaskSchema.parse(await waitForTask((path) => fetchMos(mos, path), id, 120_000))
    const download = await fetchMos(mos, `/api/v1/tasks/${id}/download`)
    expect((await download.arrayBuffer()).byteLength).toBe(record.output.size_bytes)
    // The sweep's first round after the orphan age: only the input and the whole result are left.
    const swept = await until(
      () => tree(folder),
      (names) => !names.some((name) => name.endsWith('.part')),
      30_000,
      200,
    )
    expect(swept).toEqual(['input', 'output'])
  }, 180_000)
})

/**
 * SIGTERM while an upload streams in, slower than the shutdown grace: the upload gets the grace,
 * then its connection is cut (the client sees the connection end, not an answer), no task is made
 * and the log says one request was cut (an upload within the grace: shutdown-drain.test.ts). The process waited
 * for nothing once the connection was cut: it closed its stores and exited while the upload's
 * handler was still ending, so its task folder stayed behind (empty) and the request had no log line.
 */
describe('single node: SIGTERM mid-upload (fs storage)', () => {
  it('cuts the upload, removes all it stored, logs the request, and exits 0', async () => {
    const dir = await tempDir()
    const base = join(dir.path, 'data')
    const server = await startMos('all-term', {
      SERVICE__AUTH__API_KEYS: API_KEY,
      SERVICE__SERVER__HOST: '127.0.0.1',
      SERVICE__SERVER__PORT: '0',
      SERVICE__SERVER__SHUTDOWN_GRACE_MS: '1500',
      SERVICE__STORAGE__FS__BASE: base,
      SERVICE__ENGINES__THREADS: '1',
      // No thread to stop: the process is done closing the moment the cut connection is.
      SERVICE__ENGINES__PRESTART: 'false',
      SERVICE__LOG__FORMAT: 'json',
    })
    try {
      const boundary = 'mos-term-boundary'
      const head = new TextEncoder().encode(
        `--${boundary}\r\nContent-Disposition: form-data; name="engine"\r\n\r\ndraco\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.obj"\r\n\r\n`,
      )
      let pulls = 0
      // A slow client: 64 KB every 50 ms, for longer than the process's grace.
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          if (pulls++ === 0) return controller.enqueue(head)
          await sleep(50)
          controller.enqueue(new TextEncoder().encode('v 0 0 0\n'.repeat(8192)))
        },
      })
      const upload = streamUpload(server.url, boundary, body)
      const files = join(base, 'files')
      await partFileOnDisk(files)
      server.child.kill('SIGTERM')
      expect(await server.exited).toBe(0)
      // Cut, it is told so in words it can act on (node-shutdown-refusal.ts; shutdown-drain.test.ts has the rest).
      const answer = await upload
      expect(answer instanceof Response ? [answer.status, answer.headers.get('retry-after')] : answer).toEqual([
        503,
        String(STOPPING_RETRY_AFTER_SECONDS),
      ])
      expect(await tree(join(base, 'records'))).toEqual([])
      expect(await tree(files)).toEqual(['tasks'])
      const lines = server
        .output()
        .split('\n')
        .filter((text) => text.startsWith('{'))
        .map((text) => JSON.parse(text) as Record<string, unknown>)
      expect(lines.find((entry) => entry.msg === 'request' && entry.path === '/api/v1/compress')).toMatchObject({
        method: 'POST',
        status: 503,
        answeredBy: 'shutdown grace over',
        handlerStatus: 400,
      })
      expect(lines.find((entry) => entry.cut !== undefined)).toMatchObject({
        cut: 1,
        refused: 1,
        graceMs: 1500,
        msg: 'shutdown grace of 1500 ms over: 1 request still in flight cut; 1 connection with no answer under way first answered 503 (send the request again) (SERVICE__SERVER__SHUTDOWN_GRACE_MS)',
      })
    } finally {
      await stopMos(server, 5000)
      await dir.remove()
    }
  }, 60_000)
})
