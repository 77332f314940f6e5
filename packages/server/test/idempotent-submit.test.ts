import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { EXTENSION_ERROR_TEXTS, EXTENSION_HEADERS } from '@mos/sdk/contract'
import { Redis } from 'ioredis'
import { createStorage } from 'unstorage'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { until } from '../../../test/support/poll.ts'
import { REDIS_URL, redisAvailable, removeRedisKeys, uniquePrefix } from '../../../test/support/redis.ts'
import { ApiError } from '../src/errors.ts'
import { createRecordsIdempotencyStore, createRedisIdempotencyStore } from '../src/idempotency/idempotency-store.ts'
import { IDEMPOTENCY_TTL_MS, IN_FLIGHT_CLAIM_MS, idempotent } from '../src/idempotency/idempotent-submit.ts'
import { idempotentCompress } from './support/idempotent-request.ts'

const hasRedis = await redisAvailable()
const HOLDER = fileURLToPath(new URL('./support/idempotency-holder.ts', import.meta.url))

afterEach(() => vi.useRealTimers())

describe('idempotent: a duplicate of a request still being handled', () => {
  it('waits 10 s, then gets the 409 with Retry-After: 1; its retry once the first has answered gets the first task', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const store = createRecordsIdempotencyStore(createStorage())
    const request = () => idempotentCompress(store, 'k-1')
    let answer: ((response: { task_id: string }) => void) | undefined
    const first = idempotent(request(), () => new Promise<{ task_id: string }>((resolve) => (answer = resolve)))
    // The duplicate is sent once the first holds the key (its handler runs): sent at once, its digest
    // could finish first under load, and it would be the one handled (seen in CI: { task_id: 'second' }).
    // setImmediate is not faked: the digests and the claim (real I/O) run in between.
    for (let turn = 0; turn < 10_000 && !answer; turn++) await new Promise((resolve) => setImmediate(resolve))
    expect(answer, 'the first request holds the key and is handled').toBeDefined()
    let settled = false
    const duplicate = idempotent(request(), async () => ({ task_id: 'second' }))
      .catch((error: unknown) => error)
      .finally(() => {
        settled = true
      })
    // Fake time in 100 ms steps, each letting the digests and claims (real I/O) run in between.
    for (let step = 0; step < 300 && !settled; step++) await vi.advanceTimersByTimeAsync(100)
    const refused = await duplicate
    expect(refused).toBeInstanceOf(ApiError)
    expect(refused).toMatchObject({ status: 409, message: EXTENSION_ERROR_TEXTS.idempotencyKeyInFlight() })
    expect((refused as ApiError).extraHeaders).toEqual({ 'retry-after': '1' })

    answer!({ task_id: 't1' })
    expect(await first).toEqual({ task_id: 't1' })
    const retry = request()
    expect(await idempotent(retry, async () => ({ task_id: 'second' }))).toEqual({ task_id: 't1' })
    expect(retry.event.res.headers.get(EXTENSION_HEADERS.idempotentReplayed)).toBe('true')
  })
})

/**
 * A key's claim while its request is handled lasts IN_FLIGHT_CLAIM_MS and is renewed while the
 * handler works, so a process that dies holding it (killed; cut at the end of its shutdown grace
 * after answering 503 "send the request again") frees the key within that bound. Claimed for the
 * key's 24 h, every retry with it (the SDK's, after the 503) was a 409 for a day.
 */
describe.skipIf(!hasRedis)('idempotent on Redis: the claim of a request still being handled', () => {
  const prefixes = [uniquePrefix('idem-dead'), uniquePrefix('idem-renewed')] as const
  // Made once the tests above are done: their fake timers would drive this client's own.
  let client: Redis
  beforeAll(() => {
    client = new Redis(REDIS_URL)
  })
  /** The one key's claim under `prefix` (its name holds a digest of the key). */
  const claimKey = async (prefix: string) => {
    const [found] = await client.keys(`${prefix}:idempotency:*`)
    return found!
  }
  afterAll(async () => {
    for (const prefix of prefixes) await removeRedisKeys(prefix)
    client.disconnect()
  })

  it('left by a process that died handling it, lapses within IN_FLIGHT_CLAIM_MS, where it held the key for 24 h', async () => {
    const holder = spawn(process.execPath, ['--import', 'tsx', HOLDER, REDIS_URL, prefixes[0], 'dies-holding'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const exited = once(holder, 'exit')
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('handling') && resolve())
        holder.once('exit', () => reject(new Error('the holder exited before it handled its request')))
      })
    } finally {
      holder.kill('SIGKILL')
      await exited
    }
    const key = await claimKey(prefixes[0])
    const left = await client.pttl(key)
    expect(left).toBeGreaterThan(0)
    expect(left).toBeLessThanOrEqual(IN_FLIGHT_CLAIM_MS)
    // Nobody renews a dead process's claim: it only runs down.
    await new Promise((resolve) => setTimeout(resolve, 1_100))
    expect(await client.pttl(key)).toBeLessThan(left - 1_000)
  }, 30_000)

  it('is renewed while its handler works, and keeps the answer 24 h once answered', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] })
    const store = createRedisIdempotencyStore(client, prefixes[1])
    let answer: (response: { task_id: string }) => void = () => undefined
    let handling: () => void = () => undefined
    const began = new Promise<void>((resolve) => (handling = resolve))
    const first = idempotent(idempotentCompress(store, 'renewed'), () => {
      handling()
      return new Promise<{ task_id: string }>((resolve) => (answer = resolve))
    })
    await began
    const key = await claimKey(prefixes[1])
    // As if most of the claim had run down: a renewal gives it its whole bound again.
    await client.pexpire(key, 2_000)
    await vi.advanceTimersByTimeAsync(IN_FLIGHT_CLAIM_MS / 3)
    await until(
      () => client.pttl(key),
      (ttl) => ttl > 2_000,
      2_000,
    )
    expect(await client.pttl(key)).toBeGreaterThan(IN_FLIGHT_CLAIM_MS - 2_000)
    answer!({ task_id: 't1' })
    expect(await first).toEqual({ task_id: 't1' })
    expect(await client.pttl(key)).toBeGreaterThan(IDEMPOTENCY_TTL_MS - 60_000)
  })
})
