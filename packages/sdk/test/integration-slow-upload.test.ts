import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { localServiceEnv } from '../../../test/support/service-env.ts'
import { startMos, stopMos, type MosProcess } from '../../server/test/support/processes.ts'
import { createClient, ERROR_TEXTS, PayloadTooLargeError, TimeoutError, type NodeClient } from '../src/node.ts'
import { API_KEY } from './support/real-server.ts'
import { startThrottlingProxy, type ThrottlingProxy } from './support/throttling-proxy.ts'

/** The trial's upload limit in variant A, in MB (one test sends more). */
const MAX_FILE_MB = 50

/** Deterministic bytes of a `.glb` upload (the submit stores them; the task's fate does not matter here). */
function uploadBytes(size: number): Uint8Array {
  const bytes = new Uint8Array(size)
  for (let i = 0; i < size; i += 4096) bytes[i] = (i / 4096) % 251
  return bytes
}

// The service runs from its entry point in its own process (as `npm start` runs it): in this
// process it would share one event loop with the client and the proxy, and its reading pace with
// them, which is not what a slow link is about.
describe('uploads through a slow or stalled link (the compiled server, a throttling proxy)', () => {
  let mos: MosProcess
  let dataDir: string
  let direct: NodeClient<'A'>
  let proxy: ThrottlingProxy | undefined

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'mos-sdk-slow-upload-'))
    mos = await startMos('mos', localServiceEnv({ variant: 'A', dataDir, apiKeys: API_KEY }))
    direct = createClient({ baseURL: mos.url, apiKey: API_KEY, variant: 'A' })
  })
  afterEach(async () => {
    await proxy?.close()
    proxy = undefined
  })
  afterAll(async () => {
    await stopMos(mos)
    await rm(dataDir, { recursive: true, force: true })
  })

  /** Every task the service holds. */
  const taskIds = async () => {
    const ids: string[] = []
    for await (const page of direct.listTasks({ limit: 100 })) ids.push(...page.tasks.map((task) => task.task_id))
    return ids.sort()
  }

  /** A client that reaches the service through `link`, with a small time limit. */
  const throughProxy = (link: ThrottlingProxy, timeout: number) =>
    createClient({ baseURL: link.url, apiKey: API_KEY, timeout, retryPolicy: { initialDelayMs: 50 } })

  it('an upload that takes three times the time limit but keeps moving is sent once and taken whole', async () => {
    // Loopback lets the kernel hold about 4 MB of a request (64 KB segments) and wakes the writer
    // when about a third of that is sent: at 4 MB/s the client is handed on every ~0.4 s (measured),
    // well inside the 3 s limit. The first 36 MB are paced (9 s); the rest, what the kernel still
    // held at the end, goes as fast as the service reads, as that tail would take seconds to drain
    // at 4 MB/s after the client's last write, on loopback only (a real link's buffers are far smaller).
    // The limit also bounds the wait for the answer once the body is sent: 3 s leaves a loaded
    // machine room to store and hash 44 MB (at 2 s, a load of 15 on two cores went past it).
    const timeout = 3000
    proxy = await startThrottlingProxy(mos.url, { bytesPerSecond: 4_000_000, pacedBytes: 36_000_000 })
    const bytes = uploadBytes(44_000_000)
    const started = Date.now()
    const { task_id } = await throughProxy(proxy, timeout).compress({ file: bytes, filename: 'large.glb', engine: 'draco' })
    // The link really was slow: the request took well past the limit, which was never reached.
    expect(Date.now() - started).toBeGreaterThan(2.5 * timeout)
    expect(proxy.requests).toBe(1)
    const record = await direct.getTask(task_id)
    expect(record).toMatchObject({ task_id, type: 'compress', input_filename: 'large.glb', input_size_bytes: bytes.byteLength })
  })

  it('an upload that stalls mid-way ends in TimeoutError after the time limit, once per documented attempt, and makes no task', async () => {
    // Past the first MB the link forwards nothing and stops reading; the client fills the kernel's buffers, then waits.
    const timeout = 1000
    proxy = await startThrottlingProxy(mos.url, { bytesPerSecond: 16_000_000, stallAfterBytes: 1_000_000 })
    const before = await taskIds()
    const started = Date.now()
    const error = await throughProxy(proxy, timeout)
      .compress({ file: uploadBytes(16_000_000), filename: 'stalled.glb', engine: 'draco' })
      .catch((caught: unknown) => caught)
    const elapsed = Date.now() - started
    expect(error).toBeInstanceOf(TimeoutError)
    expect((error as TimeoutError).message).toBe(`request timed out: no progress for ${timeout} ms`)
    // The first attempt and maxRetries (default 2) retries under one Idempotency-Key, no more (docs/sdk.md, Retries).
    expect(proxy.requests).toBe(3)
    // Three attempts of about the limit each, plus the backoff: not the upload's own length, and no hang.
    expect(elapsed).toBeGreaterThanOrEqual(3 * timeout)
    expect(elapsed).toBeLessThan(10 * timeout)
    expect(await taskIds()).toEqual(before)
  })

  it("a streamed upload keeps its Content-Length: one over the service's limit is refused from its headers", async () => {
    // The link stalls after 256 KB: only a refusal made from the declared length can arrive.
    proxy = await startThrottlingProxy(mos.url, { bytesPerSecond: 16_000_000, stallAfterBytes: 256 * 1024 })
    const bytes = new Uint8Array((MAX_FILE_MB + 30) * 1024 * 1024)
    const error = await throughProxy(proxy, 5000)
      .compress({ file: bytes, filename: 'too-large.glb', engine: 'draco' })
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(PayloadTooLargeError)
    expect((error as PayloadTooLargeError).message).toBe(ERROR_TEXTS.fileTooLarge(MAX_FILE_MB + 30, MAX_FILE_MB))
    expect(proxy.requests).toBe(1)
  })
})
