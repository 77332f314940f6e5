import { createStorage, type Storage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import type { Config } from '../config/schema.ts'
import { createRedisConnections, type RedisConnections } from '../redis/redis-connections.ts'
import type { FileStore } from './file-store.ts'
import { fsAtomicDriver } from './fs-atomic-driver.ts'
import { createFsFileStore } from './fs-file-store.ts'
import { createMemoryFileStore } from './memory-file-store.ts'
import { redisRecordsDriver } from './redis-records-driver.ts'
import { createS3Client, s3Credentials, type S3Client } from './s3-client.ts'
import { createS3FileStore } from './s3-file-store.ts'
import { s3RecordsDriver } from './s3-records-driver.ts'

export interface Stores {
  /** Records (tasks, batches, licence state). */
  records: Storage
  /** Uploaded inputs and results. */
  files: FileStore
  /** Whether other processes can see these stores (`memory` is this process only). */
  shared: boolean
  /**
   * One round trip to the records' store and the files' store (readiness). Records in Redis are
   * asked on their connection's state first, so a Redis away is said at once, with why.
   */
  ping(): Promise<void>
  /** Releases what the stores hold (the Redis connections too when the stores opened them). */
  close(): Promise<void>
}

/** The clients the stores share with the rest of the process. */
export interface StoreClients {
  /** The process's Redis connections; absent: the stores open (and close) a set of their own. */
  redis?: RedisConnections
}

type StorageConfig = Config['storage']

// The fs drivers resolve their folders (a relative base is the working directory's, as before):
// this module only names them, so it needs no node:path and the API role's walk goes through it.

/** The S3 settings with the key prefix ending in '/' (`prod` → `prod/`), so records and files stay in its folder. */
const s3Settings = (config: StorageConfig) => {
  const prefix = config.s3.prefix.replace(/^\/+/, '')
  return { ...config.s3, prefix: prefix && !prefix.endsWith('/') ? `${prefix}/` : prefix }
}

/** The files driver in force: `auto` follows the records driver (s3 → s3, memory → memory, else fs). */
export function filesDriverOf(config: StorageConfig): 'fs' | 's3' | 'memory' {
  if (config.filesDriver !== 'auto') return config.filesDriver
  if (config.driver === 's3') return 's3'
  if (config.driver === 'memory') return 'memory'
  return 'fs'
}

/** The one S3 client for the configured bucket; a start-up error when it has no credentials. */
function createS3ClientFor(config: StorageConfig): S3Client {
  return createS3Client({ ...config.s3, ...s3Credentials(config.s3) })
}

/** Where fs records live: also where the sweep looks for the part files of killed record writes. */
export const fsRecordsFolder = (config: StorageConfig): string => `${config.fs.base}/records`

/** Record storage for the configured driver. */
function createRecordStorage(config: StorageConfig, clients: { redis: RedisConnections; s3: () => S3Client }): Storage {
  switch (config.driver) {
    case 'memory':
      return createStorage({ driver: memoryDriver() })
    case 'fs':
      return createStorage({ driver: fsAtomicDriver({ base: fsRecordsFolder(config) }) })
    case 'redis':
      return createStorage({
        driver: redisRecordsDriver({ client: clients.redis.commands(config.redis.url), base: `${config.redis.prefix}:records` }),
      })
    case 's3':
      return createStorage({ driver: s3RecordsDriver({ client: clients.s3(), base: `${s3Settings(config).prefix}records` }) })
  }
}

/** The file store for the configured files driver. */
function createFileStore(config: StorageConfig, clients: { s3: () => S3Client }): FileStore {
  switch (filesDriverOf(config)) {
    case 'memory':
      return createMemoryFileStore()
    case 'fs':
      return createFsFileStore(`${config.fs.base}/files`)
    case 's3':
      return createS3FileStore(clients.s3(), { prefix: `${s3Settings(config).prefix}files/` })
  }
}

// A key nobody writes: asking whether it exists is a round trip to the storage, and nothing more.
const PROBE_KEY = 'readyz-probe'

/** Builds the record storage and the file store the configuration names, on one S3 client and the process's Redis. */
export function createStores(config: StorageConfig, clients: StoreClients = {}): Stores {
  const ownRedis = clients.redis ? undefined : createRedisConnections({ name: `mos:${config.redis.prefix}` })
  const redis = clients.redis ?? ownRedis!
  let s3: S3Client | undefined
  const shared = { redis, s3: () => (s3 ??= createS3ClientFor(config)) }
  const records = createRecordStorage(config, shared)
  const files = createFileStore(config, shared)
  const pingRecords = async () => {
    if (config.driver === 'redis') await redis.ping(redis.commands(config.redis.url))
    else await records.hasItem(PROBE_KEY)
  }
  return {
    records,
    files,
    shared: config.driver !== 'memory' && filesDriverOf(config) !== 'memory',
    async ping() {
      await pingRecords()
      await files.size(PROBE_KEY)
    },
    async close() {
      await records.dispose().catch(() => undefined)
      await ownRedis?.close()
    },
  }
}
