import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REDIS_URL, redisAvailable, removeRedisKeys, uniquePrefix } from '../../../test/support/redis.ts'
import { startTestS3, type TestS3 } from '../../../test/support/s3-server.ts'
import { runSuite, type SuiteReport } from '../src/index.ts'
import { API_KEY, startRealServer } from './support/servers.ts'

const hasRedis = await redisAvailable()

// The project's own CI on the cluster's backends: records on Redis, files on S3 (an s3rver the test
// starts), tasks through BullMQ, the rate limit counted in Redis, in one process (the multi-process
// cluster has its own test in the server package). Four checks at a time, as against fs files: the
// test S3 server keeps folders on delete (see startTestS3), since s3rver's own clean-up deleted an
// accepted upload racing with a refused one removed beside it.
describe.skipIf(!hasRedis)('the suite against our server on Redis records, S3 files and a BullMQ queue, variant A', () => {
  const prefix = uniquePrefix('conformance')
  let s3: TestS3
  let server: Awaited<ReturnType<typeof startRealServer>>
  let report: SuiteReport

  beforeAll(async () => {
    s3 = await startTestS3()
    server = await startRealServer('A', {
      ...s3.env,
      SERVICE__STORAGE__FILES_DRIVER: 's3',
      SERVICE__STORAGE__S3__PREFIX: prefix,
      SERVICE__STORAGE__DRIVER: 'redis',
      SERVICE__STORAGE__REDIS__URL: REDIS_URL,
      SERVICE__STORAGE__REDIS__PREFIX: prefix,
      SERVICE__QUEUE__DRIVER: 'bullmq',
      SERVICE__QUEUE__REDIS__URL: REDIS_URL,
      SERVICE__QUEUE__PREFIX: prefix,
      SERVICE__RATE_LIMIT__REDIS_URL: REDIS_URL,
    })
    report = await runSuite({ baseUrl: server.url, apiKey: API_KEY, variant: 'A', profiles: ['core', 'mos'], concurrency: 4 })
  }, 300_000)
  afterAll(async () => {
    await server?.stop()
    await s3?.close()
    await removeRedisKeys(prefix)
  })

  it('reports no failure', () => {
    expect(report.results.filter((r) => r.outcome === 'fail').map((r) => `${r.id}: ${r.message}`)).toEqual([])
  })

  it('really ran the life cycle, outputs and downloads (they pass, not skip)', () => {
    for (const id of [
      'task.lifecycle',
      'compress.output.draco',
      'compress.output.meshopt',
      'download.length',
      'batch.record',
      'convert.output.gltf',
      'diagnose.result',
    ]) {
      expect(report.results.find((r) => r.id === id)?.outcome, id).toBe('pass')
    }
  })
})
