import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REDIS_URL, redisAvailable, removeRedisKeys, uniquePrefix } from '../../../test/support/redis.ts'
import { runSuite, type SuiteReport } from '../src/index.ts'
import { API_KEY, startRealServer } from './support/servers.ts'

const hasRedis = await redisAvailable()

// The project's own CI on the cluster's shared state: records on Redis, tasks through BullMQ, the
// rate limit counted in Redis, in one process (the multi-process cluster on Redis + S3 has its own
// test in the server package). Files stay on fs here: against s3rver, the suite's bursts of refused
// uploads (deletes) beside accepted ones made s3rver lose an accepted input now and then, which
// points at s3rver's folder clean-up on delete (real S3 has no folders); the cluster test covers S3.
describe.skipIf(!hasRedis)('the suite against our server on Redis records and a BullMQ queue, variant A', () => {
  const prefix = uniquePrefix('conformance')
  let server: Awaited<ReturnType<typeof startRealServer>>
  let report: SuiteReport

  beforeAll(async () => {
    server = await startRealServer('A', {
      SERVICE__STORAGE__DRIVER: 'redis',
      SERVICE__STORAGE__REDIS__URL: REDIS_URL,
      SERVICE__STORAGE__REDIS__PREFIX: prefix,
      SERVICE__QUEUE__DRIVER: 'bullmq',
      SERVICE__QUEUE__REDIS__URL: REDIS_URL,
      SERVICE__QUEUE__PREFIX: prefix,
      SERVICE__RATE_LIMIT__REDIS_URL: REDIS_URL,
    })
    report = await runSuite({ baseUrl: server.url, apiKey: API_KEY, variant: 'A', profiles: ['core', 'mos'] })
  }, 300_000)
  afterAll(async () => {
    await server?.stop()
    await removeRedisKeys(prefix)
  })

  it('reports no failure', () => {
    expect(report.results.filter((r) => r.outcome === 'fail').map((r) => `${r.id}: ${r.message}`)).toEqual([])
  })

  it('really ran the life cycle, outputs and downloads (they pass, not skip)', () => {
    for (const id of ['task.lifecycle', 'compress.output.draco', 'compress.output.meshopt', 'download.length', 'batch.record', 'convert.output.gltf', 'diagnose.result']) {
      expect(report.results.find((r) => r.id === id)?.outcome, id).toBe('pass')
    }
  })
})
