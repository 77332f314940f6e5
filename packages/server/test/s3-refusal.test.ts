import { createServer, request, type Server } from 'node:http'
import { readdir } from 'node:fs/promises'
import { submitResponseSchema } from '@mos/sdk/contract'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { startTestS3, type TestS3 } from '../../../test/support/s3-server.ts'
import { API_KEY, fetchMos, form, tempDir, waitForTask } from './support/harness.ts'
import { type MosProcess, startMos, stopMos } from './support/processes.ts'

const { available, paths } = corpusFiles({ box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb') })

/**
 * A relay to the test S3 server that refuses every write of a task's result with 403 AccessDenied, as
 * S3 does under a bucket policy that denies it (or credentials that may read but not write there).
 */
async function refusingOutputWrites(s3: TestS3): Promise<{ endpoint: string; server: Server }> {
  const target = new URL(s3.endpoint)
  const server = createServer((req, res) => {
    if ((req.method === 'PUT' || req.method === 'POST') && req.url?.includes('/output')) {
      req.resume()
      const body = '<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>'
      res.writeHead(403, { 'content-type': 'application/xml' }).end(body)
      return
    }
    const upstream = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    upstream.on('error', () => res.destroy())
    req.pipe(upstream)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return { endpoint: `http://127.0.0.1:${port}`, server }
}

/**
 * An S3 store that refuses the write of a result: the task fails at once saying the storage failed,
 * its log line naming the refusal. The run retried the refusal as if the store were away, for the
 * five minutes of its store retries, the task `processing` all that time.
 */
describe.skipIf(!available)('an S3 store refusing to store a result', () => {
  let s3: TestS3
  let relay: Awaited<ReturnType<typeof refusingOutputWrites>>
  let dir: Awaited<ReturnType<typeof tempDir>>
  let mos: MosProcess

  beforeAll(async () => {
    s3 = await startTestS3()
    relay = await refusingOutputWrites(s3)
    dir = await tempDir()
    mos = await startMos('s3-refusing', {
      SERVICE__AUTH__API_KEYS: API_KEY,
      SERVICE__SERVER__HOST: '127.0.0.1',
      SERVICE__SERVER__PORT: '0',
      SERVICE__STORAGE__FS__BASE: dir.path,
      SERVICE__STORAGE__FILES_DRIVER: 's3',
      ...s3.env,
      SERVICE__STORAGE__S3__ENDPOINT: relay.endpoint,
      SERVICE__ENGINES__THREADS: '1',
      SERVICE__LOG__FORMAT: 'json',
    })
  }, 60_000)

  afterAll(async () => {
    await stopMos(mos)
    relay?.server.close()
    await s3?.close()
    await dir?.remove()
  }, 60_000)

  it('fails the task with the storage text, logs the refusal once, and stores no result', async () => {
    const response = await fetchMos(mos, '/api/v1/compress', { method: 'POST', body: await form({ engine: 'draco' }, [paths.box]) })
    expect(response.status).toBe(200)
    const id = submitResponseSchema.parse(await response.json()).task_id
    const done = await waitForTask((path) => fetchMos(mos, path), id, 60_000)
    expect(done).toMatchObject({ status: 'failed', error: 'internal error: storage failed; the service log has the cause' })

    const lines = mos
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((entry) => entry.taskId === id)
    expect(lines.find((entry) => entry.msg === 'task failed')?.cause).toBe(`[mos] [s3] put files/tasks/${id}/output: 403 AccessDenied`)
    expect(lines.filter((entry) => String(entry.msg).includes('retrying'))).toEqual([])
    const stored = await readdir(`${s3.directory}/${s3.bucket}/files/tasks/${id}`)
    // s3rver keeps an object as files named after its key: the input's are there, nothing of an output.
    expect(stored.some((name) => name.startsWith('input'))).toBe(true)
    expect(stored.filter((name) => name.startsWith('output'))).toEqual([])
  }, 90_000)
})
