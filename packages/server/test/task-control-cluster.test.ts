import { join } from 'node:path'
import { afterAll, beforeAll, describe } from 'vitest'
import { REDIS_URL, redisAvailable, removeRedisKeys, uniquePrefix } from '../../../test/support/redis.ts'
import { startTestS3, type TestS3 } from '../../../test/support/s3-server.ts'
import { throwAwayLicenceEnv } from '../../../test/support/service-env.ts'
import { createS3Client } from '../src/storage/s3-client.ts'
import { createS3FileStore } from '../src/storage/s3-file-store.ts'
import { writeBigMesh } from './support/big-mesh.ts'
import { API_KEY, tempDir } from './support/harness.ts'
import { sharedRedisEnv, startMosGroup, stopMos, type MosProcess } from './support/processes.ts'
import { describeTaskControl, OTHER_KEY, taskControlInputs } from './support/task-control-suite.ts'

const hasRedis = await redisAvailable()

describe.skipIf(!taskControlInputs || !hasRedis)('task control on a cluster (Redis + BullMQ + S3, API and worker processes)', () => {
  const prefix = uniquePrefix('task-control')
  let dir: Awaited<ReturnType<typeof tempDir>>
  let s3: TestS3
  let bigMesh = ''
  let api: MosProcess | undefined
  let worker: MosProcess | undefined
  beforeAll(async () => {
    dir = await tempDir()
    s3 = await startTestS3()
    bigMesh = join(dir.path, 'big-mesh.glb')
    await writeBigMesh(bigMesh, 500)
    const env = {
      ...sharedRedisEnv({ redisUrl: REDIS_URL, prefix, dataDir: dir.path, s3: s3.env, apiKeys: `${API_KEY},${OTHER_KEY}` }),
      ...throwAwayLicenceEnv(),
      SERVICE__LOG__LEVEL: 'warn',
    }
    ;[api, worker] = (await startMosGroup([
      ['api', { ...env, SERVICE__SERVER__ROLE: 'api' }],
      ['worker', { ...env, SERVICE__SERVER__ROLE: 'worker' }],
    ])) as [MosProcess, MosProcess]
  }, 120_000)
  afterAll(async () => {
    await Promise.allSettled([api, worker].map((p) => stopMos(p, 5000)))
    await s3?.close()
    await removeRedisKeys(prefix)
    await dir?.remove()
  }, 60_000)

  describeTaskControl(
    {
      api: () => api!,
      workers: () => [worker!],
      filesOf: async (id) => {
        const keys: string[] = []
        const files = createS3FileStore(
          createS3Client({
            endpoint: s3.endpoint,
            bucket: s3.bucket,
            region: 'us-east-1',
            accessKeyId: 'S3RVER',
            secretAccessKey: 'S3RVER',
          }),
          { prefix: 'files/' },
        )
        for await (const file of files.list(`tasks/${id}/`)) keys.push(file.key)
        return keys.sort()
      },
    },
    () => bigMesh,
  )
})
