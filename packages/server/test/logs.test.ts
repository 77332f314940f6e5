import { createHash, randomUUID } from 'node:crypto'
import { NodeIO } from '@gltf-transform/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { until } from '../../../test/support/poll.ts'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { sharedWideUvs } from '../../../test/support/gltf-fixtures.ts'
import { REDIS_URL, redisAvailable, removeRedisKeys, uniquePrefix } from '../../../test/support/redis.ts'
import { localServiceEnv } from '../../../test/support/service-env.ts'
import { API_KEY, fetchMos, form, tempDir, waitForTask } from './support/harness.ts'
import { sharedRedisEnv, startApiAndWorker, startMos, stopMos, stopMosGroup, type MosProcess } from './support/processes.ts'

const { available, paths } = corpusFiles({ box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb') })
const hasRedis = await redisAvailable()

type Line = Record<string, unknown> & { level: string; msg: string }

/** The JSON log lines a process wrote so far (every line of its standard output should be one). */
function jsonLines(process_: MosProcess): Line[] {
  return process_
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Line)
}

/** Waits for a line matching `match` (lines can trail the response that caused them by a moment). */
async function lineOf(processes: MosProcess[], match: (line: Line) => boolean, timeoutMs = 10_000): Promise<Line> {
  const found = await until(() => processes.flatMap(jsonLines).find(match), Boolean, timeoutMs, 50)
  if (!found) throw new Error(`no matching log line in:\n${processes.map((p) => p.output()).join('\n')}`)
  return found
}

const fingerprint = (key: string) => createHash('sha256').update(key).digest('hex').slice(0, 12)
const requestIdFor = (name: string) => `${name}-${randomUUID().slice(0, 8)}`

async function wideUvsGlb(): Promise<Uint8Array> {
  return new NodeIO().writeBinary(sharedWideUvs())
}

describe.skipIf(!available)('logs: one process', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let mos: MosProcess
  const call = (path: string, init: RequestInit = {}, key: string | null = API_KEY) => fetchMos(mos, path, init, key)

  beforeAll(async () => {
    dir = await tempDir()
    mos = await startMos('logs', {
      ...localServiceEnv({ variant: 'A', dataDir: dir.path, apiKeys: API_KEY }),
      SERVICE__ENGINES__THREADS: '1',
      SERVICE__LOG__LEVEL: 'info',
      SERVICE__LOG__FORMAT: 'json',
    })
  }, 60_000)

  afterAll(async () => {
    await stopMos(mos, 5000)
    await dir?.remove()
  })

  it('writes only JSON lines, the start-up one naming the address', async () => {
    const listening = await lineOf([mos], (line) => line.msg.includes('listening on http://'))
    expect(listening).toMatchObject({ level: 'info', role: 'all', port: mos.port, pid: mos.pid })
    const text = mos.output().trim().split('\n')
    expect(text.every((line) => line.startsWith('{'))).toBe(true)
  })

  it('correlates a request, its task and every transition of the task by the request id', async () => {
    const requestId = requestIdFor('compress')
    const response = await call('/api/v1/compress', {
      method: 'POST',
      body: await form({ engine: 'draco' }, [paths.box]),
      headers: { 'X-Request-Id': requestId },
    })
    expect(response.status).toBe(200)
    expect(response.headers.get('x-request-id')).toBe(requestId)
    const { task_id: taskId } = (await response.json()) as { task_id: string }
    const record = await waitForTask((path) => call(path), taskId)
    expect(record.status).toBe('completed')

    const request = await lineOf([mos], (line) => line.msg === 'request' && line.requestId === requestId)
    expect(request).toMatchObject({
      level: 'info',
      method: 'POST',
      route: '/api/v1/compress',
      status: 200,
      keyHash: fingerprint(API_KEY),
      taskId,
    })
    expect(request.durationMs).toBeTypeOf('number')
    expect(request.durationMs as number).toBeGreaterThan(0)

    const byTask = (status: string) => (line: Line) => line.taskId === taskId && line.status === status
    const queued = await lineOf([mos], byTask('queued'))
    const running = await lineOf([mos], byTask('running'))
    const completed = await lineOf([mos], byTask('completed'))
    const size = (record as { input_size_bytes: number }).input_size_bytes
    for (const line of [queued, running, completed]) {
      expect(line).toMatchObject({ requestId, type: 'compress', engine: 'draco', inputBytes: size })
    }
    expect(queued.msg).toBe('task queued')
    expect(running).toMatchObject({ msg: 'task running', attempt: 1 })
    expect(completed).toMatchObject({
      msg: 'task completed',
      level: 'info',
      attempt: 1,
      outputBytes: (record as { output: { size_bytes: number } }).output.size_bytes,
    })
    expect(completed.durationMs).toBeTypeOf('number')
    // Polling the task is a request of its own, with the route pattern and no task made.
    const poll = await lineOf([mos], (line) => line.msg === 'request' && line.path === `/api/v1/tasks/${taskId}`)
    expect(poll).toMatchObject({ route: '/api/v1/tasks/:id', method: 'GET', status: 200 })
    expect(poll.taskId).toBeUndefined()
  })

  it('logs a failed task with its error, and lines an engine thread wrote with the request id', async () => {
    const failedId = requestIdFor('broken')
    const broken = await call('/api/v1/compress', {
      method: 'POST',
      body: await form({ engine: 'draco' }, [{ name: 'broken.glb', bytes: new TextEncoder().encode('glTF but not really a model') }]),
      headers: { 'X-Request-Id': failedId },
    })
    const brokenTask = ((await broken.json()) as { task_id: string }).task_id
    const brokenRecord = await waitForTask((path) => call(path), brokenTask)
    expect(brokenRecord.status).toBe('failed')
    const failed = await lineOf([mos], (line) => line.taskId === brokenTask && line.status === 'failed')
    expect(failed).toMatchObject({ msg: 'task failed', level: 'warn', requestId: failedId, error: brokenRecord.error, attempt: 1 })

    // meshopt keeps these texture coordinates as floats and says so from the engine thread.
    const warnedId = requestIdFor('warned')
    const warned = await call('/api/v1/compress', {
      method: 'POST',
      body: await form({ engine: 'meshopt' }, [{ name: 'wide-uvs.glb', bytes: await wideUvsGlb() }]),
      headers: { 'X-Request-Id': warnedId },
    })
    const warnedTask = ((await warned.json()) as { task_id: string }).task_id
    expect((await waitForTask((path) => call(path), warnedTask)).status).toBe('completed')
    const warning = await lineOf([mos], (line) => line.thread === 'engine' && line.taskId === warnedTask)
    expect(warning).toMatchObject({ level: 'warn', requestId: warnedId, type: 'compress', engine: 'meshopt' })
    expect(warning.msg).toContain('TEXCOORD_0 kept as floats')
  })

  it('makes a request id when none (or an unsafe one) is sent, echoes it on errors, and never logs the key', async () => {
    const generated = await call('/api/v1/capabilities', {}, null)
    expect(generated.status).toBe(401)
    const id = generated.headers.get('x-request-id')
    expect(id).toMatch(/^[0-9a-f-]{36}$/)
    const unauthorised = await lineOf([mos], (line) => line.requestId === id)
    expect(unauthorised).toMatchObject({ msg: 'request', status: 401, route: '/api/v1/capabilities' })
    expect(unauthorised.keyHash).toBeUndefined()

    const wrongKey = 'wrong-key-that-must-not-be-logged'
    for (const unsafe of ['has space', 'x'.repeat(129), 'semi;colon<b>']) {
      const response = await call('/api/v1/capabilities', { headers: { 'X-Request-Id': unsafe } }, wrongKey)
      const replaced = response.headers.get('x-request-id')
      expect(replaced).not.toBe(unsafe)
      expect(replaced).toMatch(/^[0-9a-f-]{36}$/)
      expect(await lineOf([mos], (line) => line.requestId === replaced)).toMatchObject({ status: 401, keyHash: fingerprint(wrongKey) })
    }
    const missing = await call('/no/such/route')
    expect(missing.status).toBe(404)
    expect(missing.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    expect(mos.output()).not.toContain(wrongKey)
    expect(mos.output()).not.toContain(API_KEY)
  })
})

/**
 * The cluster setup: the API process logs the request and the queuing, the worker process logs the
 * run, both under the request id the client sent (it travels in the task record and the BullMQ job).
 */
describe.skipIf(!available || !hasRedis)('logs: API and worker processes on BullMQ', () => {
  const prefix = uniquePrefix('logs')
  let dir: Awaited<ReturnType<typeof tempDir>>
  let api: MosProcess
  let worker: MosProcess

  beforeAll(async () => {
    dir = await tempDir()
    const env = { ...sharedRedisEnv({ redisUrl: REDIS_URL, prefix, dataDir: dir.path, apiKeys: API_KEY }), SERVICE__LOG__FORMAT: 'json' }
    ;[api, worker] = await startApiAndWorker(env)
  }, 120_000)

  afterAll(async () => {
    await stopMosGroup([api, worker])
    await removeRedisKeys(prefix)
    await dir?.remove()
  }, 60_000)

  it('carries the request id from the API process into the worker process’s task and engine lines', async () => {
    const requestId = requestIdFor('cluster')
    const response = await fetch(`${api.url}/api/v1/compress`, {
      method: 'POST',
      body: await form({ engine: 'meshopt' }, [{ name: 'wide-uvs.glb', bytes: await wideUvsGlb() }]),
      headers: { 'X-API-Key': API_KEY, 'X-Request-Id': requestId },
    })
    expect(response.status).toBe(200)
    expect(response.headers.get('x-request-id')).toBe(requestId)
    const { task_id: taskId } = (await response.json()) as { task_id: string }
    const record = await waitForTask((path) => fetch(`${api.url}${path}`, { headers: { 'X-API-Key': API_KEY } }), taskId)
    expect(record.status).toBe('completed')

    expect(await lineOf([api], (line) => line.msg === 'request' && line.requestId === requestId)).toMatchObject({
      role: 'api',
      taskId,
      status: 200,
    })
    expect(await lineOf([api], (line) => line.taskId === taskId && line.status === 'queued')).toMatchObject({ role: 'api', requestId })
    for (const status of ['running', 'completed']) {
      const line = await lineOf([worker], (l) => l.taskId === taskId && l.status === status)
      expect(line).toMatchObject({ role: 'worker', requestId, type: 'compress', engine: 'meshopt', pid: worker.pid })
    }
    const engineLine = await lineOf([worker], (line) => line.thread === 'engine' && line.taskId === taskId)
    expect(engineLine).toMatchObject({ role: 'worker', requestId, level: 'warn' })
    // The API process never ran it.
    expect(jsonLines(api).some((line) => line.taskId === taskId && line.status === 'running')).toBe(false)
  })
})
