import { createBatchStore, type BatchStore } from '../batches/batch-store.ts'
import type { Config } from '../config/schema.ts'
import type { TaskState } from '../tasks/task-state.ts'
import type { RedisConnections } from '../redis/redis-connections.ts'
import { createStores, type Stores } from '../storage/create-storage.ts'
import type { FileStore } from '../storage/file-store.ts'
import { createTaskStore, withWrittenRecordCache, type TaskStore } from '../storage/task-store.ts'
import { createMemoryTaskIndex, createRedisTaskIndex, withTaskIndex, type TaskIndex } from '../tasks/task-index.ts'
import { queueRedisUrl } from '../queue/create-queue.ts'

/** Where the service keeps things: records, files, tasks and batches, over one set of clients. */
export interface ServiceStorage {
  stores: Stores
  files: FileStore
  taskStore: TaskStore
  /** Each owner's tasks, newest first (task listing). */
  taskIndex: TaskIndex
  batches: BatchStore
}

/** Creates the stores of `config.storage` on the process's Redis connections. */
export function createServiceStorage(config: Config, redis: RedisConnections): ServiceStorage {
  const stores = createStores(config.storage, { redis })
  const plainRecords = createTaskStore(stores.records)
  const taskIndex = createTaskIndex(config, redis, () => plainRecords.list())
  const records = withTaskIndex(plainRecords, taskIndex)
  // One process writes every record with the local queue: it can answer reads from what it wrote.
  const taskStore = config.queue.driver === 'local' && config.storage.driver !== 'memory' ? withWrittenRecordCache(records) : records
  return { stores, files: stores.files, taskStore, taskIndex, batches: createBatchStore(stores.records) }
}

/** The owners' index where the records are: Redis when the deployment has one, else this process's memory. */
function createTaskIndex(config: Config, redis: RedisConnections, seed: () => Promise<TaskState[]>): TaskIndex {
  if (config.storage.driver === 'redis')
    return createRedisTaskIndex(redis.commands(config.storage.redis.url), `${config.storage.redis.prefix}:owner-tasks`)
  if (config.queue.driver === 'bullmq')
    return createRedisTaskIndex(redis.commands(queueRedisUrl(config)), `${config.queue.prefix}:owner-tasks`)
  return createMemoryTaskIndex(seed)
}
