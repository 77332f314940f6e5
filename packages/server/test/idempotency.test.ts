import { readFile } from 'node:fs/promises'
import { EXTENSION_HEADERS, submitResponseSchema } from '@mos/sdk/contract'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { REDIS_URL, redisAvailable, removeRedisKeys, uniquePrefix } from '../../../test/support/redis.ts'
import { API_KEY, fetchMos, form, tempDir, testEnv } from './support/harness.ts'
import { sharedRedisEnv, startMos, startMosGroup, stopMos, type MosProcess } from './support/processes.ts'

const { available, paths } = corpusFiles({
  box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
  other: assimp('glTF2', 'BoxBadNormals-glTF-Binary', 'BoxBadNormals.glb'),
})
const hasRedis = await redisAvailable()
let keyCount = 0
const newKey = () => `test-key-${process.pid}-${++keyCount}-${Date.now()}`

/** Idempotent submits against `apis` (one process, or two API processes of one cluster). */
function idempotencySuite(deployment: () => { apis: MosProcess[] }) {
  const api = (i: number) => deployment().apis[i % deployment().apis.length]!
  const compress = async (to: MosProcess, key: string | undefined, file = paths.box, engine = 'draco', apiKey = API_KEY) =>
    fetchMos(
      to,
      '/api/v1/compress',
      { method: 'POST', body: await form({ engine }, [file]), headers: key ? { [EXTENSION_HEADERS.idempotencyKey]: key } : {} },
      apiKey,
    )
  const usedFiles = async () =>
    ((await (await fetchMos(api(0), '/api/v1/license/info')).json()) as { trial: { used_files: number } }).trial.used_files

  it('a retried submit with the same key returns the first task, marked replayed, and counts no second file', async () => {
    const key = newKey()
    const before = await usedFiles()
    const first = await compress(api(0), key)
    expect(first.status).toBe(200)
    expect(first.headers.get(EXTENSION_HEADERS.idempotentReplayed)).toBeNull()
    const { task_id } = submitResponseSchema.parse(await first.json())
    const again = await compress(api(1), key)
    expect(again.status).toBe(200)
    expect(again.headers.get(EXTENSION_HEADERS.idempotentReplayed)).toBe('true')
    expect(submitResponseSchema.parse(await again.json()).task_id).toBe(task_id)
    expect(await usedFiles()).toBe(before + 1)
  })

  it('the same key with other fields or another file is a 422, and makes nothing', async () => {
    const key = newKey()
    expect((await compress(api(0), key)).status).toBe(200)
    const before = await usedFiles()
    for (const response of [await compress(api(1), key, paths.box, 'meshopt'), await compress(api(0), key, paths.other)]) {
      expect(response.status).toBe(422)
      expect(await response.json()).toEqual({
        error: 'Idempotency-Key was already used with a different request: use a new key for a new request',
      })
    }
    expect(await usedFiles()).toBe(before)
  })

  it('concurrent duplicates make one task', async () => {
    const key = newKey()
    const responses = await Promise.all([0, 1, 2, 3].map((i) => compress(api(i), key)))
    const ids = await Promise.all(
      responses.map(async (r) => {
        expect(r.status).toBe(200)
        return submitResponseSchema.parse(await r.json()).task_id
      }),
    )
    expect(new Set(ids).size).toBe(1)
  })

  it('keys belong to their API key, and without a key every submit is a new task', async () => {
    const key = newKey()
    const mine = submitResponseSchema.parse(await (await compress(api(0), key)).json()).task_id
    const theirs = submitResponseSchema.parse(await (await compress(api(1), key, paths.box, 'draco', 'second-key')).json()).task_id
    expect(theirs).not.toBe(mine)
    const plain = await Promise.all([compress(api(0), undefined), compress(api(1), undefined)])
    const ids = await Promise.all(plain.map(async (r) => submitResponseSchema.parse(await r.json()).task_id))
    expect(new Set(ids).size).toBe(2)
  })

  it('batches are idempotent too', async () => {
    const key = newKey()
    const bytes = new Uint8Array(await readFile(paths.box))
    const batch = async (to: MosProcess) => {
      const body = await form(
        { engine: 'draco' },
        [
          { name: 'a.glb', bytes },
          { name: 'b.glb', bytes },
        ],
        'files',
      )
      return fetchMos(to, '/api/v1/batch/compress', { method: 'POST', body, headers: { [EXTENSION_HEADERS.idempotencyKey]: key } })
    }
    const firstResponse = await batch(api(0))
    const first = (await firstResponse.json()) as { batch_id: string }
    expect(firstResponse.status, JSON.stringify(first)).toBe(200)
    const again = await batch(api(1))
    // Its status and body are in the message: once, on a machine at load 20, the retry was not a replay.
    const againBody = await again.text()
    expect(again.headers.get(EXTENSION_HEADERS.idempotentReplayed), `${again.status} ${againBody}`).toBe('true')
    expect((JSON.parse(againBody) as { batch_id: string }).batch_id).toBe(first.batch_id)
  })

  it('refuses a malformed key before reading the body', async () => {
    for (const malformed of ['x'.repeat(256), 'k\u00e9y', 'k\to']) {
      const response = await compress(api(0), malformed)
      expect(response.status, malformed).toBe(400)
      expect(await response.json()).toEqual({ error: 'invalid value for Idempotency-Key: 1 to 255 printable ASCII characters' })
    }
  })

  it('takes a key with spaces inside (printable ASCII), and replays it', async () => {
    const key = `k o ${newKey()}`
    const first = await compress(api(0), key)
    expect(first.status, await first.clone().text()).toBe(200)
    const { task_id } = submitResponseSchema.parse(await first.json())
    const again = await compress(api(1), key)
    expect(again.headers.get(EXTENSION_HEADERS.idempotentReplayed)).toBe('true')
    expect(submitResponseSchema.parse(await again.json()).task_id).toBe(task_id)
    // 255 characters with spaces inside are a key; the bound is the length, not the characters.
    expect((await compress(api(0), `a${' '.repeat(253)}z`)).status).toBe(200)
  })
}

describe.skipIf(!available)('Idempotency-Key: single process', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let mos: MosProcess
  beforeAll(async () => {
    dir = await tempDir()
    mos = await startMos('single', testEnv('A', dir.path))
  }, 60_000)
  afterAll(async () => {
    await stopMos(mos, 5000)
    await dir?.remove()
  })
  idempotencySuite(() => ({ apis: [mos] }))

  it('an answered key still answers after a restart', async () => {
    const key = newKey()
    const body = async () => form({ engine: 'draco' }, [paths.box])
    const headers = { [EXTENSION_HEADERS.idempotencyKey]: key }
    const first = submitResponseSchema.parse(
      await (await fetchMos(mos, '/api/v1/compress', { method: 'POST', body: await body(), headers })).json(),
    )
    await stopMos(mos, 10_000)
    mos = await startMos('single-again', testEnv('A', dir.path))
    const again = await fetchMos(mos, '/api/v1/compress', { method: 'POST', body: await body(), headers })
    expect(submitResponseSchema.parse(await again.json()).task_id).toBe(first.task_id)
  }, 60_000)
})

describe.skipIf(!available || !hasRedis)('Idempotency-Key: two API processes on Redis', () => {
  const prefix = uniquePrefix('idem')
  let dir: Awaited<ReturnType<typeof tempDir>>
  let apis: MosProcess[] = []
  beforeAll(async () => {
    dir = await tempDir()
    const env = {
      ...sharedRedisEnv({ redisUrl: REDIS_URL, prefix, dataDir: dir.path, apiKeys: `${API_KEY},second-key` }),
      SERVICE__LOG__LEVEL: 'warn',
    }
    // API processes only: the tasks stay queued, which is all these tests need.
    apis = await startMosGroup([
      ['api-1', { ...env, SERVICE__SERVER__ROLE: 'api' }],
      ['api-2', { ...env, SERVICE__SERVER__ROLE: 'api' }],
    ])
  }, 60_000)
  afterAll(async () => {
    await Promise.allSettled(apis.map((p) => stopMos(p, 5000)))
    await removeRedisKeys(prefix)
    await dir?.remove()
  })
  idempotencySuite(() => ({ apis }))
})
