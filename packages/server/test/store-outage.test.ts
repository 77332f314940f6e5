import { join } from 'node:path'
import { completedTaskSchema, submitResponseSchema } from '@mos/sdk/contract'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startOwnRedis, ownRedisAvailable, type OwnRedis } from '../../../test/support/own-redis.ts'
import { sleep } from '../../../test/support/poll.ts'
import { uniquePrefix } from '../../../test/support/redis.ts'
import { writeBigMesh } from './support/big-mesh.ts'
import { API_KEY, fetchMos, form, tempDir, waitForTask } from './support/harness.ts'
import { type MosProcess, sharedRedisEnv, startApiAndWorker, stopMosGroup } from './support/processes.ts'

const hasRedisServer = await ownRedisAvailable()

/** Resolves once `process_` has printed a line matching `pattern` after its first `from` characters. */
async function printed(process_: MosProcess, pattern: RegExp, from = 0, timeoutMs = 90_000): Promise<number> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const match = pattern.exec(process_.output().slice(from))
    if (match) return from + match.index
    if (Date.now() > deadline) throw new Error(`${process_.name} never printed ${pattern}:\n${process_.output().slice(from)}`)
    await sleep(50)
  }
}

/**
 * An API process and a worker on a Redis of the test's own, which is stopped and started again (its
 * data kept, as a Redis with persistence keeps it) while a task runs: the outage delays the task,
 * never fails it, as docs/reliability.md says.
 */
describe.skipIf(!hasRedisServer)('a Redis restart while a task runs', () => {
  let redis: OwnRedis
  let dir: Awaited<ReturnType<typeof tempDir>>
  let api: MosProcess
  let worker: MosProcess
  let bigMesh: string

  beforeAll(async () => {
    redis = await startOwnRedis()
    dir = await tempDir()
    bigMesh = join(dir.path, 'big-mesh.glb')
    await writeBigMesh(bigMesh, 800)
    const env = sharedRedisEnv({ redisUrl: redis.url, prefix: uniquePrefix('outage'), dataDir: dir.path, apiKeys: API_KEY })
    // debug: the engine thread's line at the end of each job says when the job is over.
    ;[api, worker] = await startApiAndWorker({ ...env, SERVICE__LOG__LEVEL: 'debug' })
  }, 120_000)

  afterAll(async () => {
    await stopMosGroup([api, worker])
    await redis?.close()
    await dir?.remove()
  }, 60_000)

  it('completes a task whose job ended while Redis was down', async () => {
    const response = await fetchMos(api, '/api/v1/compress', {
      method: 'POST',
      body: await form({ engine: 'draco', level: 10 }, [bigMesh]),
    })
    expect(response.status).toBe(200)
    const id = submitResponseSchema.parse(await response.json()).task_id
    await printed(worker, new RegExp(`"taskId":"${id}"[^\\n]*"msg":"task running"`))

    await redis.stop()
    const downAt = worker.output().length
    // The job must end while Redis is away (else this test shows nothing): the thread's end-of-job line comes after the stop.
    const jobEnded = await printed(worker, /"msg":"engine thread memory"/, downAt)
    // The run meets the outage when it reads the record after its job: it must wait, not fail.
    // In words naming the Redis and why, where ioredis's 'Reached the max retries per request limit' named neither.
    await printed(worker, /(reading|writing) its record failed \(Redis at redis:\/\/127\.0\.0\.1:\d+ unreachable: .*\); retrying/, jobEnded)
    await redis.start()

    const done = await waitForTask((path) => fetchMos(api, path), id, 120_000)
    expect(done.status, JSON.stringify(done)).toBe('completed')
    const completed = completedTaskSchema.parse(done)
    const download = await fetchMos(api, `/api/v1/tasks/${id}/download`)
    expect(download.status).toBe(200)
    expect((await download.arrayBuffer()).byteLength).toBe(completed.output.size_bytes)
  }, 180_000)
})
