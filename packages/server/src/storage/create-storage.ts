import { join, resolve } from 'node:path'
import { createStorage, type Storage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import redisDriver from 'unstorage/drivers/redis'
import { ConfigError } from '../config/load.ts'
import type { Config } from '../config/schema.ts'
import type { FileStore } from './file-store.ts'
import { fsAtomicDriver } from './fs-atomic-driver.ts'
import { createFsFileStore } from './fs-file-store.ts'
import { createMemoryFileStore } from './memory-file-store.ts'
import { createS3FileStore } from './s3-file-store.ts'
import { s3RecordsDriver } from './s3-records-driver.ts'

export interface Stores {
  /** Records (tasks, batches, licence state). */
  records: Storage
  /** Uploaded inputs and results. */
  files: FileStore
  /** Whether other processes can see these stores (`memory` is this process only). */
  shared: boolean
  /** Releases connections of both. */
  close(): Promise<void>
}

type StorageConfig = Config['storage']

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

/** Record storage for the configured driver. */
export function createRecordStorage(config: StorageConfig): Storage {
  switch (config.driver) {
    case 'memory':
      return createStorage({ driver: memoryDriver() })
    case 'fs':
      return createStorage({ driver: fsAtomicDriver({ base: join(resolve(config.fs.base), 'records') }) })
    case 'redis':
      return createStorage({
        driver: redisDriver({
          url: config.redis.url,
          base: `${config.redis.prefix}:records`,
          // Fail a request instead of queueing it forever while Redis is away.
          maxRetriesPerRequest: 3,
          lazyConnect: false,
        }),
      })
    case 's3':
      if (!config.s3.accessKeyId || !config.s3.secretAccessKey) {
        throw new ConfigError('SERVICE__STORAGE__DRIVER=s3 needs SERVICE__STORAGE__S3__ACCESS_KEY_ID and SERVICE__STORAGE__S3__SECRET_ACCESS_KEY')
      }
      return createStorage({ driver: s3RecordsDriver({ ...s3Settings(config), folder: 'records' }) })
  }
}

/** The file store for the configured files driver. */
export function createFileStore(config: StorageConfig): FileStore {
  switch (filesDriverOf(config)) {
    case 'memory':
      return createMemoryFileStore()
    case 'fs':
      return createFsFileStore(join(resolve(config.fs.base), 'files'))
    case 's3':
      return createS3FileStore({ ...s3Settings(config), prefix: `${s3Settings(config).prefix}files/` })
  }
}

/** Builds the record storage and the file store the configuration names. */
export function createStores(config: StorageConfig): Stores {
  const records = createRecordStorage(config)
  const files = createFileStore(config)
  return {
    records,
    files,
    shared: config.driver !== 'memory' && filesDriverOf(config) !== 'memory',
    async close() {
      await Promise.allSettled([records.dispose(), files.close?.()])
    },
  }
}
