import { randomUUID } from 'node:crypto'
import { ERROR_TEXTS, submitResponseSchema } from '@mos/sdk/contract'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { form, inProcessApp, realServer, tempDir, testEnv, waitForTask } from './support/harness.ts'
import { REDIS_URL, redisAvailable } from '../../../test/support/redis.ts'

const { available, paths } = corpusFiles({ box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb') })
const redisUrl = (await redisAvailable()) ? REDIS_URL : undefined
const OTHER_KEY = 'second-key'
const WINDOW_SECONDS = 2

/** The limit's headers as numbers. */
function figures(response: Response) {
  const header = (name: string) => (response.headers.has(name) ? Number(response.headers.get(name)) : undefined)
  return {
    limit: header('X-RateLimit-Limit'),
    remaining: header('X-RateLimit-Remaining'),
    reset: header('X-RateLimit-Reset'),
    retryAfter: header('Retry-After'),
  }
}

async function expectLimited(response: Response, perMinute: number) {
  expect(response.status).toBe(429)
  expect(await response.json()).toEqual({ error: ERROR_TEXTS.rateLimited(perMinute) })
  const f = figures(response)
  expect(f).toMatchObject({ limit: perMinute, remaining: 0 })
  expect(Number.isInteger(f.reset)).toBe(true)
  expect(f.reset! * 1000).toBeGreaterThan(Date.now() - 1000)
  expect(f.retryAfter).toBeGreaterThanOrEqual(1)
  expect(f.retryAfter).toBeLessThanOrEqual(WINDOW_SECONDS)
}

describe('rate limit in variant A (in-process)', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let service: ReturnType<typeof inProcessApp>

  beforeAll(async () => {
    dir = await tempDir()
    service = inProcessApp(
      testEnv('A', dir.path, { SERVICE__SERVER__RATE_LIMIT_PER_MINUTE: '5', SERVICE__RATE_LIMIT__WINDOW_SECONDS: String(WINDOW_SECONDS) }),
    )
  })
  afterAll(async () => {
    await service.close()
    await dir.remove()
  })

  it('lets 5 requests through with the headers, answers the 6th with 429, leaves another key alone, and passes again after the window', async () => {
    const startedAt = Math.floor(Date.now() / 1000)
    for (let i = 1; i <= 5; i++) {
      // Mixed endpoints and outcomes: every keyed request counts, errors after the key check too.
      const response = await service.call(i === 3 ? '/api/v1/tasks/unknown' : '/api/v1/capabilities')
      expect(response.status).toBe(i === 3 ? 404 : 200)
      const f = figures(response)
      expect(f).toMatchObject({ limit: 5, remaining: 5 - i })
      expect(f.reset).toBeGreaterThanOrEqual(startedAt)
      // The window opened at the first request, at the latest now: its end, rounded up to a second, is at most
      // this second's end plus the window (a first request landing in the second after startedAt was taken is 1 s later).
      expect(f.reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + WINDOW_SECONDS)
      expect(f.retryAfter).toBeUndefined()
    }
    await expectLimited(await service.call('/api/v1/capabilities'), 5)
    await expectLimited(await service.call('/api/v1/license/info'), 5)

    const other = await service.call('/api/v1/capabilities', {}, OTHER_KEY)
    expect(other.status).toBe(200)
    expect(figures(other)).toMatchObject({ limit: 5, remaining: 4 })

    // Health needs no key and is not counted; a wrong key is refused before counting.
    expect((await service.call('/api/v1/health', {}, null)).headers.has('X-RateLimit-Limit')).toBe(false)
    expect((await service.call('/api/v1/capabilities', {}, 'wrong-key')).status).toBe(401)

    await new Promise((resolve) => setTimeout(resolve, WINDOW_SECONDS * 1000 + 200))
    const again = await service.call('/api/v1/capabilities')
    expect(again.status).toBe(200)
    expect(figures(again)).toMatchObject({ limit: 5, remaining: 4 })
  })
})

describe.skipIf(!available)('rate-limit headers on every keyed response (variant A)', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let service: ReturnType<typeof inProcessApp>

  beforeAll(async () => {
    dir = await tempDir()
    service = inProcessApp(testEnv('A', dir.path, { SERVICE__SERVER__RATE_LIMIT_PER_MINUTE: '100' }))
  })
  afterAll(async () => {
    await service.close()
    await dir.remove()
  })

  it('carries them on submit, task, download (a streamed Response) and error responses', async () => {
    const submit = await service.call('/api/v1/compress', { method: 'POST', body: await form({ engine: 'draco' }, [paths.box]) })
    expect(figures(submit)).toMatchObject({ limit: 100, remaining: 99 })
    const id = submitResponseSchema.parse(await submit.json()).task_id
    await waitForTask(service.call, id)
    const download = await service.call(`/api/v1/tasks/${id}/download`)
    expect(download.status).toBe(200)
    expect(download.headers.get('content-type')).toBe('application/octet-stream')
    const f = figures(download)
    expect(f.limit).toBe(100)
    expect(f.remaining).toBeLessThan(99)
    expect((await download.arrayBuffer()).byteLength).toBeGreaterThan(0)
    const bad = await service.call('/api/v1/compress', { method: 'POST', body: await form({}, [paths.box]) })
    expect(bad.status).toBe(400)
    expect(figures(bad).limit).toBe(100)
  })
})

describe('no rate limit in variant B', () => {
  it('never answers 429 nor sends the headers', async () => {
    const dir = await tempDir()
    const service = inProcessApp(testEnv('B', dir.path, { SERVICE__SERVER__RATE_LIMIT_PER_MINUTE: '2' }))
    try {
      for (let i = 0; i < 6; i++) {
        const response = await service.call('/api/v1/capabilities')
        expect(response.status).toBe(200)
        expect(response.headers.has('X-RateLimit-Limit')).toBe(false)
      }
    } finally {
      await service.close()
      await dir.remove()
    }
  })
})

describe('rate limit when Redis does not answer (variant A)', () => {
  it('keeps limiting in the process instead of refusing traffic', async () => {
    const dir = await tempDir()
    // Port 1 on loopback: nothing listens, connections are refused at once.
    const service = inProcessApp(
      testEnv('A', dir.path, { SERVICE__SERVER__RATE_LIMIT_PER_MINUTE: '3', SERVICE__RATE_LIMIT__REDIS_URL: 'redis://127.0.0.1:1' }),
    )
    try {
      for (let i = 1; i <= 3; i++) {
        const response = await service.call('/api/v1/capabilities')
        expect(response.status).toBe(200)
        expect(figures(response)).toMatchObject({ limit: 3, remaining: 3 - i })
      }
      expect((await service.call('/api/v1/capabilities')).status).toBe(429)
    } finally {
      await service.close()
      await dir.remove()
    }
  })
})

describe.skipIf(!redisUrl)('rate limit shared through Redis by two server processes (variant A)', () => {
  let dirs: Awaited<ReturnType<typeof tempDir>>[] = []
  let servers: Awaited<ReturnType<typeof realServer>>[] = []

  beforeAll(async () => {
    const prefix = `mos-test:${randomUUID()}`
    dirs = [await tempDir(), await tempDir()]
    servers = await Promise.all(
      dirs.map((dir) =>
        realServer(
          testEnv('A', dir.path, {
            SERVICE__SERVER__RATE_LIMIT_PER_MINUTE: '5',
            SERVICE__RATE_LIMIT__WINDOW_SECONDS: String(WINDOW_SECONDS),
            SERVICE__RATE_LIMIT__REDIS_URL: redisUrl!,
            SERVICE__RATE_LIMIT__PREFIX: prefix,
          }),
        ),
      ),
    )
  })
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close({ drain: false })))
    await Promise.all(dirs.map((dir) => dir.remove()))
  })

  it('counts both servers against one limit per key', async () => {
    const [one, two] = servers as [Awaited<ReturnType<typeof realServer>>, Awaited<ReturnType<typeof realServer>>]
    const seen: number[] = []
    for (const server of [one, two, one, two, one]) {
      const response = await server.call('/api/v1/capabilities')
      expect(response.status).toBe(200)
      seen.push(figures(response).remaining!)
    }
    expect(seen).toEqual([4, 3, 2, 1, 0])
    await expectLimited(await two.call('/api/v1/capabilities'), 5)
    await expectLimited(await one.call('/api/v1/capabilities'), 5)
    const other = await two.call('/api/v1/capabilities', { headers: { 'X-API-Key': OTHER_KEY } })
    expect(other.status).toBe(200)
    expect(figures(other).remaining).toBe(4)

    await new Promise((resolve) => setTimeout(resolve, WINDOW_SECONDS * 1000 + 200))
    expect((await one.call('/api/v1/capabilities')).status).toBe(200)
  })
})
