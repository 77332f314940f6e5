import { loadConfig } from '../src/config/load.ts'
import { createStores } from '../src/storage/create-storage.ts'
import { createS3Client } from '../src/storage/s3-client.ts'
import { createS3FileStore } from '../src/storage/s3-file-store.ts'
import { createTaskStore } from '../src/storage/task-store.ts'
import { describe, expect, it } from 'vitest'
import { REDIS_URL, redisAvailable, removeRedisKeys, uniquePrefix } from '../../../test/support/redis.ts'
import { startTestS3, type TestS3 } from '../../../test/support/s3-server.ts'
import { describeStorage } from './support/storage-suite.ts'
import { tempDir } from './support/harness.ts'

// The same suite against every backend: the storage drivers must be interchangeable.
const storageOf = (env: Record<string, string>) => createStores(loadConfig(env).storage)

describeStorage('memory', { create: () => storageOf({ SERVICE__STORAGE__DRIVER: 'memory' }) })

let fsDir: Awaited<ReturnType<typeof tempDir>>
const fsEnv = () => ({ SERVICE__STORAGE__DRIVER: 'fs', SERVICE__STORAGE__FS__BASE: fsDir.path })
describeStorage('fs', {
  async create() {
    fsDir = await tempDir()
    return storageOf(fsEnv())
  },
  reopen: () => storageOf(fsEnv()),
  cleanup: () => fsDir.remove(),
})

const hasRedis = await redisAvailable()
const redisPrefix = uniquePrefix('storage')
let redisFiles: Awaited<ReturnType<typeof tempDir>>
const redisEnv = () => ({
  SERVICE__STORAGE__DRIVER: 'redis',
  SERVICE__STORAGE__REDIS__URL: REDIS_URL,
  SERVICE__STORAGE__REDIS__PREFIX: redisPrefix,
  SERVICE__STORAGE__FS__BASE: redisFiles.path,
})
if (hasRedis) {
  describeStorage('redis (records) + fs (files)', {
    async create() {
      redisFiles = await tempDir()
      return storageOf(redisEnv())
    },
    reopen: () => storageOf(redisEnv()),
    async cleanup() {
      await removeRedisKeys(redisPrefix)
      await redisFiles.remove()
    },
  })
} else {
  describe('storage: redis', () => it.skip(`needs a Redis at ${REDIS_URL}`))
}

let s3: TestS3
describeStorage('s3 (records and files)', {
  async create() {
    s3 = await startTestS3()
    return storageOf({ SERVICE__STORAGE__DRIVER: 's3', ...s3.env, SERVICE__STORAGE__S3__PREFIX: 'run-1' })
  },
  reopen: () => storageOf({ SERVICE__STORAGE__DRIVER: 's3', ...s3.env, SERVICE__STORAGE__S3__PREFIX: 'run-1' }),
  cleanup: () => s3.close(),
})

describe('storage: s3 key layout', () => {
  it('keeps records under <prefix>/records/ and files under <prefix>/files/ of the bucket', async () => {
    const server = await startTestS3()
    try {
      const stores = storageOf({ SERVICE__STORAGE__DRIVER: 's3', ...server.env, SERVICE__STORAGE__S3__PREFIX: 'deployment-a' })
      await createTaskStore(stores.records).put({
        task_id: 'layout-1',
        type: 'compress',
        status: 'pending',
        input_filename: 'a.glb',
        input_size_bytes: 1,
        created_at: new Date().toISOString(),
        job: { inputKey: 'tasks/layout-1/input', format: 'glb', options: {}, attempts: 0 },
      })
      await stores.files.write('tasks/layout-1/input', new Uint8Array([1]))
      await stores.close()
      const client = createS3Client({
        endpoint: server.endpoint,
        bucket: server.bucket,
        region: 'us-east-1',
        accessKeyId: 'S3RVER',
        secretAccessKey: 'S3RVER',
      })
      const raw = createS3FileStore(client, { prefix: '' })
      const keys: string[] = []
      for await (const file of raw.list('')) keys.push(file.key)
      expect(keys.sort()).toEqual(['deployment-a/files/tasks/layout-1/input', 'deployment-a/records/tasks/layout-1'])
    } finally {
      await server.close()
    }
  })
})
