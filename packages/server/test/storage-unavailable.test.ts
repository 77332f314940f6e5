import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { ownRedisAvailable, startOwnRedis, type OwnRedis } from '../../../test/support/own-redis.ts'
import { uniquePrefix } from '../../../test/support/redis.ts'
import { API_KEY, fetchMos, form, tempDir } from './support/harness.ts'
import { type MosProcess, startMos, stopMos } from './support/processes.ts'

const hasRedisServer = await ownRedisAvailable()
const { available, paths } = corpusFiles({ box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb') })

/** The JSON lines a process printed, parsed. */
function logLines(process_: MosProcess): Record<string, unknown>[] {
  return process_
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
}

/**
 * Records in a Redis of the test's own, stopped under a running service: a request that reaches it
 * is answered in the client's terms (a 500 to retry, with a wait, no host, port or key), /readyz and the request's
 * log line say which Redis is unreachable and why, where all three said ioredis's 'Reached the max
 * retries per request limit'.
 */
describe.skipIf(!hasRedisServer)('a Redis away under a running service', () => {
  let redis: OwnRedis
  let dir: Awaited<ReturnType<typeof tempDir>>
  let mos: MosProcess
  const prefix = uniquePrefix('away')

  beforeAll(async () => {
    redis = await startOwnRedis()
    dir = await tempDir()
    mos = await startMos('redis-away', {
      SERVICE__AUTH__API_KEYS: API_KEY,
      SERVICE__SERVER__HOST: '127.0.0.1',
      SERVICE__SERVER__PORT: '0',
      SERVICE__STORAGE__DRIVER: 'redis',
      SERVICE__STORAGE__REDIS__URL: redis.url,
      SERVICE__STORAGE__REDIS__PREFIX: prefix,
      SERVICE__STORAGE__FS__BASE: dir.path,
      SERVICE__ENGINES__PRESTART: 'false',
      SERVICE__ENGINES__THREADS: '1',
      SERVICE__LOG__FORMAT: 'json',
    })
    await redis.stop()
  }, 60_000)

  afterAll(async () => {
    await stopMos(mos)
    await redis?.close()
    await dir?.remove()
  }, 60_000)

  const port = () => new URL(redis.url).port

  it('answers a request 500 with Retry-After and a text that names no host, port or key', async () => {
    const id = '00000000-0000-4000-8000-000000000000'
    const response = await fetchMos(mos, `/api/v1/tasks/${id}`)
    const body = await response.text()
    expect(response.status, body).toBe(500)
    expect(response.headers.get('retry-after')).toBe('5')
    expect(JSON.parse(body)).toEqual({ error: 'internal error: storage unavailable, try again' })
    expect(body).not.toMatch(new RegExp(`127\\.0\\.0\\.1|${port()}|${prefix}|Reached the max retries`))

    const line = logLines(mos).find((entry) => entry.msg === 'request' && entry.path === `/api/v1/tasks/${id}`)
    expect(line).toMatchObject({ level: 'error', status: 500 })
    expect(String(line?.error)).toBe(
      `internal error: storage unavailable, try again: Redis at redis://127.0.0.1:${port()} unreachable: connect ECONNREFUSED 127.0.0.1:${port()}`,
    )
  })

  it('has /readyz name the Redis and the reason', async () => {
    const response = await fetch(`${mos.url}/readyz`)
    expect(response.status).toBe(503)
    const readiness = (await response.json()) as { failed: string[]; checks: Record<string, { error?: string }> }
    expect(readiness.failed).toContain('storage')
    // Said from the connection's state: it is between attempts to reconnect.
    expect(readiness.checks.storage?.error).toBe(
      `Redis at redis://127.0.0.1:${port()} unreachable: connect ECONNREFUSED 127.0.0.1:${port()} (reconnecting)`,
    )
  })
})

/**
 * A files folder the file system refuses (here a file where the folder should be; read-only, another
 * user's or failing disks do the same): the client gets the storage text, the log the system's words.
 * Before, the 500 carried them: 'internal error: ENOTDIR: not a directory, mkdir '/var/lib/mos/files/tasks/…''.
 */
describe.skipIf(!available)('a files folder the file system refuses', () => {
  it('answers an upload 500 storage failed, naming no path, and logs the system call that failed', async () => {
    const dir = await tempDir()
    await writeFile(join(dir.path, 'files'), 'not a folder')
    const mos = await startMos('fs-refused', {
      SERVICE__AUTH__API_KEYS: API_KEY,
      SERVICE__SERVER__HOST: '127.0.0.1',
      SERVICE__SERVER__PORT: '0',
      SERVICE__STORAGE__FS__BASE: dir.path,
      SERVICE__ENGINES__PRESTART: 'false',
      SERVICE__ENGINES__THREADS: '1',
      SERVICE__LOG__FORMAT: 'json',
    })
    try {
      const response = await fetchMos(mos, '/api/v1/compress', { method: 'POST', body: await form({ engine: 'draco' }, [paths.box]) })
      const body = await response.text()
      expect(response.status, body).toBe(500)
      expect(JSON.parse(body)).toEqual({ error: 'internal error: storage failed; the service log has the cause' })
      const line = logLines(mos).find((entry) => entry.msg === 'request' && entry.path === '/api/v1/compress')
      expect(String(line?.error)).toMatch(
        /^internal error: storage failed; the service log has the cause: \[mos\] \[fs\] write tasks\/[0-9a-f-]+\/input: E[A-Z]+: [^,]+, mkdir '\//,
      )
    } finally {
      await stopMos(mos)
      await dir.remove()
    }
  }, 60_000)
})
