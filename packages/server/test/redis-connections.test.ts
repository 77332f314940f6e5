import { readdir, readFile, readlink } from 'node:fs/promises'
import { submitResponseSchema } from '@mos/sdk/contract'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ownRedisAvailable, startOwnRedis } from '../../../test/support/own-redis.ts'
import { sleep, until } from '../../../test/support/poll.ts'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { REDIS_URL, redisAvailable, removeRedisKeys, uniquePrefix } from '../../../test/support/redis.ts'
import { startTestS3, type TestS3 } from '../../../test/support/s3-server.ts'
import { createRedisConnections } from '../src/redis/redis-connections.ts'
import { API_KEY, fetchMos, form, tempDir, waitForTask } from './support/harness.ts'
import { sharedRedisEnv, startMos, stopMos, type MosProcess } from './support/processes.ts'

const { available, paths } = corpusFiles({ box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb') })
const hasRedis = await redisAvailable()
const hasOwnRedis = await ownRedisAvailable()

/** Names of the connections Redis holds now whose name contains `tag` (CLIENT LIST). */
async function connectionsNamed(admin: Redis, tag: string): Promise<string[]> {
  const list = (await admin.client('LIST')) as string
  return list
    .split('\n')
    .map((line) => /(?:^| )name=(\S*)/.exec(line)?.[1] ?? '')
    .filter((name) => name.includes(tag))
    .sort()
}

/**
 * TCP connections process `pid` holds open to Redis's port, named or not (Linux: its socket inodes
 * looked up in /proc/net/tcp*), so a component that opens a connection of its own is counted too.
 */
async function socketsToRedis(pid: number): Promise<number> {
  const inodes = new Set<string>()
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1]
    if (inode) inodes.add(inode)
  }
  const port = Number(new URL(REDIS_URL).port || 6379)
    .toString(16)
    .toUpperCase()
    .padStart(4, '0')
  let count = 0
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const lines = (await readFile(table, 'utf8').catch(() => '')).split('\n').slice(1)
    for (const line of lines) {
      const fields = line.trim().split(/\s+/)
      // remote address is field 2 (hex ip:port), state field 3 (01 = established), inode field 9.
      if (fields[2]?.endsWith(`:${port}`) && fields[3] === '01' && inodes.has(fields[9] ?? '')) count++
    }
  }
  return count
}

describe.skipIf(!hasRedis)('redis connections: one set per process', () => {
  let admin: Redis
  beforeAll(() => {
    admin = new Redis(REDIS_URL)
  })
  afterAll(() => admin?.disconnect())

  it('opens one command connection per distinct URL, only on first use, and closes them all once', async () => {
    const name = uniquePrefix('conn')
    const redis = createRedisConnections({ name })
    // Same server, two URLs (database 0 named or not): configured apart, so kept apart.
    const other = `${REDIS_URL.replace(/\/\d*$/, '')}/0`
    expect(redis.commands(REDIS_URL)).toBe(redis.commands(REDIS_URL))
    expect(redis.commands(other)).not.toBe(redis.commands(REDIS_URL))
    expect(await connectionsNamed(admin, name)).toEqual([]) // nothing sent yet: nothing open
    await redis.commands(REDIS_URL).ping()
    await redis.commands(other).ping()
    await redis.queue(REDIS_URL).ping()
    expect(await connectionsNamed(admin, name)).toEqual([`${name}:commands`, `${name}:commands`, `${name}:queue`])
    await redis.close()
    await redis.close() // twice is fine
    expect(await connectionsNamed(admin, name)).toEqual([])
    expect(() => redis.commands(REDIS_URL)).toThrow(/closed/)
  })

  it.skipIf(!hasOwnRedis)(
    'answers a readiness PING at once with why when the connection drops under it, on the queue connection that never gives up',
    async () => {
      // A Redis of the test's own: its clients are paused, which the shared one's other users must never be.
      const own = await startOwnRedis()
      const redis = createRedisConnections({ name: uniquePrefix('drop') })
      const paused = new Redis(own.url)
      try {
        const queue = redis.queue(own.url)
        await redis.ping(queue)
        // The PING is sent on a connection that is up and gets no answer: then the connection drops.
        await paused.call('CLIENT', 'PAUSE', '3000', 'ALL')
        const ping = redis.ping(queue).then(
          () => 'answered',
          (error: Error) => error.message,
        )
        await sleep(200)
        queue.stream.destroy()
        const started = Date.now()
        const port = new URL(own.url).port
        // Before, ioredis sent the PING again once reconnected and it waited out the pause (an outage, for a probe).
        expect(await ping).toBe(`Redis at redis://127.0.0.1:${port} unreachable: the connection closed (reconnecting)`)
        // Without the fix no words come, only the answer once the pause ends; the bound leaves room for a loaded machine.
        expect(Date.now() - started).toBeLessThan(2000)
      } finally {
        paused.disconnect()
        await redis.close()
        await own.close()
      }
    },
    30_000,
  )

  describe.skipIf(!available)('a full deployment: Redis records, BullMQ queue, Redis rate limit and trial, S3 files', () => {
    const prefix = uniquePrefix('conns')
    let dir: Awaited<ReturnType<typeof tempDir>>
    let s3: TestS3
    let mos: MosProcess | undefined

    beforeAll(async () => {
      dir = await tempDir()
      s3 = await startTestS3()
      mos = await startMos('all-in-one', {
        ...sharedRedisEnv({ redisUrl: REDIS_URL, prefix, dataDir: dir.path, s3: s3.env, apiKeys: API_KEY }),
        SERVICE__SERVER__VARIANT: 'A',
        SERVICE__STORAGE__S3__PREFIX: prefix,
        SERVICE__RATE_LIMIT__REDIS_URL: REDIS_URL,
        SERVICE__RATE_LIMIT__PREFIX: `${prefix}:ratelimit`,
        // The sweep (and its Redis lock) runs within the test.
        SERVICE__STORAGE__ORPHAN_UPLOAD_MINUTES: '0.02',
      })
    }, 120_000)
    afterAll(async () => {
      await stopMos(mos, 10_000)
      await s3?.close()
      await removeRedisKeys(prefix)
      await dir?.remove()
    }, 60_000)

    it('holds four connections however many components use Redis: commands, the queue, its blocking duplicate, and the subscriber that hears cancels', async () => {
      const call = (path: string, init: RequestInit = {}) => fetchMos(mos!, path, init)
      // A task touches every component: rate limit, trial counter, records, queue; the sweep's lock
      // is taken within the orphan interval.
      const submitted = await call('/api/v1/compress', { method: 'POST', body: await form({ engine: 'draco', level: 10 }, [paths.box]) })
      expect(submitted.status).toBe(200)
      expect(submitted.headers.get('x-ratelimit-remaining')).not.toBeNull()
      const { task_id } = submitResponseSchema.parse(await submitted.json())
      expect(await waitForTask(call, task_id)).toMatchObject({ status: 'completed' })
      // A sweep round takes its lock (held for about one interval, so looked for while it lives).
      const locks = await until(
        () => admin.keys(`${prefix}:lock:*`),
        (keys) => keys.length > 0,
        10_000,
        50,
      )
      expect(locks).not.toEqual([])
      expect(await admin.keys(`${prefix}:license:trial`)).toEqual([`${prefix}:license:trial`])

      const names = await connectionsNamed(admin, prefix)
      expect(names, names.join(', ')).toHaveLength(4)
      expect(names.filter((n) => n === `mos:${prefix}:commands`)).toHaveLength(1)
      // A process that runs tasks listens for cancels from the first run on (pub/sub takes a connection of its own).
      expect(names.filter((n) => n === `mos:${prefix}:subscriber`)).toHaveLength(1)
      // And no unnamed connection beside them (where /proc tells).
      if (process.platform === 'linux') expect(await socketsToRedis(mos!.pid)).toBe(4)
    })
  })
})
