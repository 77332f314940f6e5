import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { completedTaskSchema, submitResponseSchema, type TaskRecord } from '@mos/sdk/contract'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sleep } from '../../../test/support/poll.ts'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { createS3Client } from '../src/storage/s3-client.ts'
import { createS3FileStore } from '../src/storage/s3-file-store.ts'
import type { TaskState } from '../src/tasks/task-state.ts'
import { writeBigMesh } from './support/big-mesh.ts'
import { API_KEY, fetchMos, form, tempDir } from './support/harness.ts'
import { sharedRedisEnv, startMos, startMosGroup, stopMosGroup, type MosProcess } from './support/processes.ts'
import { REDIS_URL, redisAvailable, removeRedisKeys, uniquePrefix } from '../../../test/support/redis.ts'
import { startTestS3, type TestS3 } from '../../../test/support/s3-server.ts'

const { available, paths } = corpusFiles({ box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb') })
const hasRedis = await redisAvailable()

/**
 * A real cluster on this machine: two API processes and two worker processes, each started from the
 * real entry point, sharing Redis (records, queue) and an S3 server (files) that the test runs.
 */
describe.skipIf(!available || !hasRedis)('cluster: 2 API + 2 worker processes on Redis + S3', () => {
  const prefix = uniquePrefix('cluster')
  let dir: Awaited<ReturnType<typeof tempDir>>
  let s3: TestS3
  let redis: Redis
  let bigMesh: string
  let env: Record<string, string>
  const apis: MosProcess[] = []
  const workers: MosProcess[] = []

  beforeAll(async () => {
    dir = await tempDir()
    s3 = await startTestS3()
    redis = new Redis(REDIS_URL)
    bigMesh = join(dir.path, 'big-mesh.glb')
    await writeBigMesh(bigMesh, 800)
    env = {
      ...sharedRedisEnv({ redisUrl: REDIS_URL, prefix, dataDir: dir.path, s3: s3.env, apiKeys: API_KEY }),
      // A dead worker's task is free again after ~4 s and found within 2 s more.
      SERVICE__QUEUE__LOCK_SECONDS: '4',
      SERVICE__QUEUE__STALLED_CHECK_SECONDS: '2',
    }
    const started = (await startMosGroup([
      ['api-1', { ...env, SERVICE__SERVER__ROLE: 'api' }],
      ['api-2', { ...env, SERVICE__SERVER__ROLE: 'api' }],
      ['worker-1', { ...env, SERVICE__SERVER__ROLE: 'worker' }],
      ['worker-2', { ...env, SERVICE__SERVER__ROLE: 'worker' }],
    ])) as [MosProcess, MosProcess, MosProcess, MosProcess]
    apis.push(started[0], started[1])
    workers.push(started[2], started[3])
  }, 120_000)

  afterAll(async () => {
    await stopMosGroup([...apis, ...workers])
    redis?.disconnect()
    await s3?.close()
    await removeRedisKeys(prefix)
    await dir?.remove()
  }, 60_000)

  const call = (to: MosProcess, path: string, init: RequestInit = {}) => fetchMos(to, path, init)
  const submit = async (to: MosProcess, file: string) => {
    const response = await call(to, '/api/v1/compress', { method: 'POST', body: await form({ engine: 'draco', level: 10 }, [file]) })
    expect(response.status).toBe(200)
    return submitResponseSchema.parse(await response.json()).task_id
  }
  const record = async (to: MosProcess, id: string) =>
    (await (await call(to, `/api/v1/tasks/${id}`)).json()) as TaskRecord & Record<string, unknown>
  const waitEnded = async (to: MosProcess, id: string, timeoutMs = 90_000) => {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const r = await record(to, id)
      if (r.status === 'completed' || r.status === 'failed') return r
      if (Date.now() > deadline) throw new Error(`task ${id} still ${r.status}`)
      await sleep(100)
    }
  }
  /** The stored record, with the internal run count. */
  const stored = async (id: string) => JSON.parse((await redis.get(`${prefix}:records:tasks:${id}`)) ?? 'null') as TaskState | null
  const files = () =>
    createS3FileStore(
      createS3Client({ endpoint: s3.endpoint, bucket: s3.bucket, region: 'us-east-1', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }),
      { prefix: 'files/' },
    )
  const objectsOf = async (id: string) => {
    const store = files()
    const keys: string[] = []
    for await (const file of store.list(`tasks/${id}/`)) keys.push(file.key)
    return keys.sort()
  }

  it('serves only health and metrics on a worker port', async () => {
    const health = await fetch(`${workers[0]!.url}/api/v1/health`)
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ status: 'ok' })
    expect((await fetch(`${workers[0]!.url}/api/v1/metrics`)).status).toBe(401)
    const metrics = await call(workers[0]!, '/api/v1/metrics')
    expect(metrics.status).toBe(200)
    expect(await metrics.text()).toContain('service_tasks_total')
    const submitOnWorker = await call(workers[0]!, '/api/v1/compress', {
      method: 'POST',
      body: await form({ engine: 'draco' }, [paths.box]),
    })
    expect(submitOnWorker.status).toBe(404)
  })

  it('runs a task submitted to one API process; the other reports it and serves the download', async () => {
    const id = await submit(apis[0]!, paths.box)
    const done = completedTaskSchema.parse(await waitEnded(apis[1]!, id))
    const download = await call(apis[1]!, `/api/v1/tasks/${id}/download`)
    expect(download.status).toBe(200)
    const bytes = new Uint8Array(await download.arrayBuffer())
    expect(bytes.byteLength).toBe(done.output.size_bytes)
    expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe('glTF')
    expect(await objectsOf(id)).toEqual([`tasks/${id}/input`, `tasks/${id}/output`])
    // The worker that ran it counts it in its own metrics (Prometheus adds up the processes).
    const counted = await Promise.all(
      workers.map(
        async (w) =>
          (await (await call(w, '/api/v1/metrics')).text()).match(/^service_tasks_total\{[^}]*status="completed"[^}]*\} (\d+)/m)?.[1],
      ),
    )
    expect(
      counted
        .map(Number)
        .filter(Boolean)
        .reduce((a, b) => a + b, 0),
    ).toBe(1)
  })

  it('finishes a task once after its worker is killed with SIGKILL mid-task', async () => {
    const id = await submit(apis[0]!, bigMesh)
    // Wait until a worker runs it, as the other API process sees it (progress comes from the worker).
    const seen: string[] = []
    const deadline = Date.now() + 60_000
    let running: TaskRecord & Record<string, unknown>
    for (;;) {
      running = await record(apis[1]!, id)
      seen.push(`${running.status}:${running.progress ?? ''}`)
      if (running.status === 'processing' && Number(running.progress) > 0) break
      if (running.status === 'completed' || running.status === 'failed' || Date.now() > deadline) {
        throw new Error(`never caught task ${id} running: ${seen.join(' ')}`)
      }
      await sleep(50)
    }
    const owner = await redis.hget(`${prefix}:tasks:${id}`, 'pb')
    const victim = workers.find((w) => owner?.endsWith(`:${w.pid}`))
    expect(victim, `worker running the task (${owner})`).toBeDefined()
    victim!.child.kill('SIGKILL')
    expect(await victim!.exited).toBe('SIGKILL')
    expect((await record(apis[1]!, id)).status).toBe('processing')

    const done = completedTaskSchema.parse(await waitEnded(apis[1]!, id))
    const state = await stored(id)
    expect(state?.job.attempts).toBe(2) // the killed run and the one that finished
    expect(await objectsOf(id)).toEqual([`tasks/${id}/input`, `tasks/${id}/output`])
    const download = await call(apis[0]!, `/api/v1/tasks/${id}/download`)
    expect((await download.arrayBuffer()).byteLength).toBe(done.output.size_bytes)
    // The ending is recorded once: it does not change afterwards.
    await sleep(1000)
    expect((await record(apis[0]!, id)).completed_at).toBe(done.completed_at)

    // The same worker, restarted, joins again.
    const index = workers.indexOf(victim!)
    workers[index] = await startMos(`worker-${index + 1}b`, { ...env, SERVICE__SERVER__ROLE: 'worker' })
  }, 120_000)

  it('completes 50 tasks submitted at once, none lost or run twice', async () => {
    const box = new Uint8Array(await readFile(paths.box))
    const ids = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const body = await form({ engine: i % 2 ? 'draco' : 'meshopt' }, [{ name: `box-${i}.glb`, bytes: box }])
        const response = await call(apis[i % 2]!, '/api/v1/compress', { method: 'POST', body })
        expect(response.status).toBe(200)
        return submitResponseSchema.parse(await response.json()).task_id
      }),
    )
    expect(new Set(ids).size).toBe(50)
    const records = await Promise.all(ids.map((id, i) => waitEnded(apis[(i + 1) % 2]!, id)))
    for (const r of records) completedTaskSchema.parse(r)
    expect(records.map((r) => r.input_filename).sort()).toEqual(Array.from({ length: 50 }, (_, i) => `box-${i}.glb`).sort())
    // Each ran exactly once, and left exactly its input and one output.
    const states = await Promise.all(ids.map(stored))
    expect(states.map((s) => s?.job.attempts)).toEqual(ids.map(() => 1))
    const objects = await Promise.all(ids.map(objectsOf))
    expect(objects).toEqual(ids.map((id) => [`tasks/${id}/input`, `tasks/${id}/output`]))
    // Nothing left in the queue.
    expect([await redis.llen(`${prefix}:tasks:wait`), await redis.llen(`${prefix}:tasks:active`)]).toEqual([0, 0])
  }, 180_000)

  it('keeps no half task and no file when an API process is killed mid-upload', async () => {
    const before = new Set((await redis.keys(`${prefix}:records:tasks:*`)).map((k) => k.split(':').pop()))
    const bytes = new Uint8Array(await readFile(bigMesh))
    const boundary = 'mos-test-boundary'
    const head = new TextEncoder().encode(
      `--${boundary}\r\nContent-Disposition: form-data; name="engine"\r\n\r\ndraco\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.glb"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    )
    // Send the form head and 12 MB of the file, then stall: the API process is killed mid-upload.
    let sent = 0
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (sent === 0) controller.enqueue(head)
        if (sent >= 12 * 1024 * 1024) return new Promise(() => undefined)
        const chunk = bytes.subarray(sent, sent + 1024 * 1024)
        sent += chunk.byteLength
        controller.enqueue(chunk)
      },
    })
    const victim = apis[0]!
    const upload = fetch(`${victim.url}/api/v1/compress`, {
      method: 'POST',
      headers: { 'X-API-Key': API_KEY, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
      duplex: 'half',
    } as RequestInit).catch((error: Error) => error)
    while (sent < 12 * 1024 * 1024) await sleep(20)
    await sleep(300)
    victim.child.kill('SIGKILL')
    expect(await victim.exited).toBe('SIGKILL')
    expect(await upload).toBeInstanceOf(Error)

    const after = (await redis.keys(`${prefix}:records:tasks:*`)).map((k) => k.split(':').pop())
    expect(after.filter((id) => !before.has(id))).toEqual([])
    // No object of a task without a record: a multipart upload shows nothing until it completes.
    const store = files()
    const orphans: string[] = []
    for await (const file of store.list('tasks/')) if (!before.has(file.key.split('/')[1])) orphans.push(file.key)
    expect(orphans).toEqual([])
    // The other API process still answers.
    expect((await fetch(`${apis[1]!.url}/api/v1/health`)).status).toBe(200)
  })

  it('drains on SIGTERM: a worker stopping mid-task finishes it, then exits', async () => {
    const id = await submit(apis[1]!, bigMesh)
    const deadline = Date.now() + 60_000
    let owner: string | null = null
    while (!owner) {
      if (Date.now() > deadline) throw new Error('task never started')
      owner = (await stored(id))?.status === 'processing' ? await redis.hget(`${prefix}:tasks:${id}`, 'pb') : null
      await sleep(50)
    }
    const worker = workers.find((w) => owner!.endsWith(`:${w.pid}`))!
    worker.child.kill('SIGTERM')
    expect(await worker.exited).toBe(0)
    const state = await stored(id)
    expect(worker.output()).toContain('SIGTERM: finishing requests in flight')
    expect(state?.status).toBe('completed')
    expect(state?.job.attempts).toBe(1)
  }, 120_000)
})
