import { createBatchStore, type BatchStore } from '../batches/batch-store.ts'
import type { Config } from '../config/schema.ts'
import type { RedisConnections } from '../redis/redis-connections.ts'
import { createStores, type Stores } from '../storage/create-storage.ts'
import type { FileStore } from '../storage/file-store.ts'
import { createTaskStore, withWrittenRecordCache, type TaskStore } from '../storage/task-store.ts'

/** Where the service keeps things: records, files, tasks and batches, over one set of clients. */
export interface ServiceStorage {
  stores: Stores
  files: FileStore
  taskStore: TaskStore
  batches: BatchStore
}

/** Creates the stores of `config.storage` on the process's Redis connections. */
export function createServiceStorage(config: Config, redis: RedisConnections): ServiceStorage {
  const stores = createStores(config.storage, { redis })
  const records = createTaskStore(stores.records)
  // One process writes every record with the local queue: it can answer reads from what it wrote.
  const taskStore = config.queue.driver === 'local' && config.storage.driver !== 'memory' ? withWrittenRecordCache(records) : records
  return { stores, files: stores.files, taskStore, batches: createBatchStore(stores.records) }
}
