import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { EXTENSION_HEADERS, submitResponseSchema, type TaskRecord } from '@mos/sdk/contract'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REDIS_URL, redisAvailable, removeRedisKeys, uniquePrefix } from '../../../test/support/redis.ts'
import { writeBigMesh } from './support/big-mesh.ts'
import { API_KEY, fetchMos, form, tempDir, testEnv } from './support/harness.ts'
import { sharedRedisEnv, startMos, startMosGroup, stopMos, type MosProcess } from './support/processes.ts'

const hasRedis = await redisAvailable()

/** The events of a server-sent-events body, in order, with their records. */
async function readEvents(response: Response): Promise<{ event: string; record: TaskRecord }[]> {
  const text = await response.text()
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('event: '))
    .map((block) => {
      const [eventLine = '', dataLine = ''] = block.split('\n')
      return { event: eventLine.slice('event: '.length), record: JSON.parse(dataLine.slice('data: '.length)) as TaskRecord }
    })
}

/**
 * The waits of one deployment, seen from `api` while `worker` runs the tasks (the same process in
 * the single-process deployment, two processes on Redis in the cluster).
 */
function waitSuite(deployment: () => { api: MosProcess; bigMesh: string }) {
  const submit = async (file: string) => {
    const response = await fetchMos(deployment().api, '/api/v1/compress', {
      method: 'POST',
      body: await form({ engine: 'draco', level: 10 }, [file]),
    })
    expect(response.status).toBe(200)
    return submitResponseSchema.parse(await response.json()).task_id
  }

  it('a long poll answers at its deadline while the task runs, and as soon as it ends, not at the deadline', async () => {
    const id = await submit(deployment().bigMesh)
    const early = await fetchMos(deployment().api, `/api/v1/tasks/${id}?wait=1`)
    expect(early.headers.get(EXTENSION_HEADERS.waitMax)).toBe('60')
    expect(['pending', 'processing']).toContain(((await early.json()) as TaskRecord).status)
    const started = Date.now()
    const response = await fetchMos(deployment().api, `/api/v1/tasks/${id}?wait=60`)
    expect(response.status).toBe(200)
    expect(((await response.json()) as TaskRecord).status).toBe('completed')
    // Woken by the completion: a wait that ran to its deadline would take the full 60 s.
    expect(Date.now() - started).toBeLessThan(55_000)
  }, 60_000)

  it('the event stream sends rising progress, then the final event, then ends', async () => {
    const id = await submit(deployment().bigMesh)
    const response = await fetchMos(deployment().api, `/api/v1/tasks/${id}/events`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/)
    const events = await readEvents(response)
    const last = events.at(-1)!
    expect(last.event).toBe('completed')
    expect(last.record).toMatchObject({ task_id: id, status: 'completed', progress: 100 })
    const progress = events.slice(0, -1)
    expect(progress.every((e) => e.event === 'progress')).toBe(true)
    const values = progress.map((e) => ('progress' in e.record ? (e.record.progress ?? 0) : 0))
    expect(values.some((value) => value > 0 && value < 100)).toBe(true)
    expect(values).toEqual([...values].sort((a, b) => a - b))
  }, 60_000)

  it('a failed task ends its stream with a failed event', async () => {
    const id = await submit(join(deployment().bigMesh, '..', 'broken.glb'))
    const events = await readEvents(await fetchMos(deployment().api, `/api/v1/tasks/${id}/events`))
    expect(events.at(-1)).toMatchObject({ event: 'failed', record: { task_id: id, status: 'failed' } })
  }, 60_000)

  it('refuses a bad wait and answers 404 for an unknown task on both endpoints', async () => {
    for (const wait of ['61', '-1', '1.5', 'soon', '']) {
      const response = await fetchMos(deployment().api, `/api/v1/tasks/00000000-0000-0000-0000-000000000000?wait=${wait}`)
      expect(response.status).toBe(400)
      expect(await response.json()).toEqual({ error: 'invalid value for wait: a whole number of seconds from 0 to 60' })
    }
    const unknown = '00000000-0000-0000-0000-000000000000'
    for (const path of [`/api/v1/tasks/${unknown}?wait=5`, `/api/v1/tasks/${unknown}/events`]) {
      const response = await fetchMos(deployment().api, path)
      expect(response.status).toBe(404)
      expect(await response.json()).toEqual({ error: `task not found: ${unknown}` })
    }
  })
}

describe('waiting on a task: single process', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let mos: MosProcess
  let bigMesh: string
  beforeAll(async () => {
    dir = await tempDir()
    bigMesh = join(dir.path, 'big-mesh.glb')
    await writeBigMesh(bigMesh, 800)
    await writeFile(join(dir.path, 'broken.glb'), 'glTF not really')
    mos = await startMos('single', testEnv('A', join(dir.path, 'data'), { SERVICE__ENGINES__THREADS: '1' }))
  }, 60_000)
  afterAll(async () => {
    await stopMos(mos, 5000)
    await dir?.remove()
  })
  waitSuite(() => ({ api: mos, bigMesh }))

  it('a wait ends when the service stops, with the record as it is', async () => {
    const id = submitResponseSchema.parse(
      await (
        await fetchMos(mos, '/api/v1/compress', { method: 'POST', body: await form({ engine: 'draco', level: 10 }, [bigMesh]) })
      ).json(),
    ).task_id
    const waiting = fetchMos(mos, `/api/v1/tasks/${id}?wait=60`)
    await new Promise((resolve) => setTimeout(resolve, 300))
    mos.child.kill('SIGTERM')
    const response = await waiting
    expect(response.status).toBe(200)
    expect(((await response.json()) as TaskRecord).task_id).toBe(id)
  }, 60_000)
})

describe.skipIf(!hasRedis)('waiting on a task: API process and worker process on Redis', () => {
  const prefix = uniquePrefix('wait')
  let dir: Awaited<ReturnType<typeof tempDir>>
  let processes: MosProcess[] = []
  let bigMesh: string
  beforeAll(async () => {
    dir = await tempDir()
    bigMesh = join(dir.path, 'big-mesh.glb')
    await writeBigMesh(bigMesh, 800)
    await writeFile(join(dir.path, 'broken.glb'), 'glTF not really')
    const env = sharedRedisEnv({ redisUrl: REDIS_URL, prefix, dataDir: dir.path, apiKeys: API_KEY })
    processes = await startMosGroup([
      ['api', { ...env, SERVICE__SERVER__ROLE: 'api' }],
      ['worker', { ...env, SERVICE__SERVER__ROLE: 'worker' }],
    ])
  }, 60_000)
  afterAll(async () => {
    await Promise.allSettled(processes.map((p) => stopMos(p, 5000)))
    await removeRedisKeys(prefix)
    await dir?.remove()
  })
  waitSuite(() => ({ api: processes[0]!, bigMesh }))
})
