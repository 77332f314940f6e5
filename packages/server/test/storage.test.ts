import { loadConfig } from '../src/config/load.ts'
import { createStores } from '../src/storage/create-storage.ts'
import { describe, it } from 'vitest'
import { REDIS_URL, redisAvailable, removeRedisKeys, uniquePrefix } from './support/redis.ts'
import { startTestS3, type TestS3 } from './support/s3-server.ts'
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
  describe('storage: redis', () => it.skip('needs a Redis at ' + REDIS_URL))
}

let s3: TestS3
describeStorage('s3 (records and files)', {
  async create() {
    s3 = await startTestS3()
    return storageOf({ SERVICE__STORAGE__DRIVER: 's3', ...s3.env, SERVICE__STORAGE__S3__PREFIX: 'run-1/' })
  },
  reopen: () => storageOf({ SERVICE__STORAGE__DRIVER: 's3', ...s3.env, SERVICE__STORAGE__S3__PREFIX: 'run-1/' }),
  cleanup: () => s3.close(),
})
