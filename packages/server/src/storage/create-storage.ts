import { join, resolve } from 'node:path'
import { createStorage, type Storage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import type { Config } from '../config/schema.ts'
import type { FileStore } from './file-store.ts'
import { fsAtomicDriver } from './fs-atomic-driver.ts'
import { createFsFileStore } from './fs-file-store.ts'
import { createMemoryFileStore } from './memory-file-store.ts'

export interface Stores {
  /** Records (tasks, batches, licence state). */
  records: Storage
  /** Uploaded inputs and results. */
  files: FileStore
}

/** Builds the record storage and the file store the configuration names. */
export function createStores(config: Config['storage']): Stores {
  if (config.driver === 'memory') return { records: createStorage({ driver: memoryDriver() }), files: createMemoryFileStore() }
  const base = resolve(config.fs.base)
  return {
    records: createStorage({ driver: fsAtomicDriver({ base: join(base, 'records') }) }),
    files: createFsFileStore(join(base, 'files')),
  }
}
