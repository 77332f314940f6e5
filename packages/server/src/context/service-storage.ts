import { createBatchStore, type BatchStore } from '../batches/batch-store.ts'
import type { Config } from '../config/schema.ts'
import { createConsoleSessions, type ConsoleSessions } from '../console/console-sessions.ts'
import { createRecordsIdempotencyStore, createRedisIdempotencyStore, type IdempotencyStore } from '../idempotency/idempotency-store.ts'
import { queueRedisUrl } from '../queue/create-queue.ts'
import type { TaskState } from '../tasks/task-state.ts'
import type { RedisConnections } from '../redis/redis-connections.ts'
import { createStores, type Stores } from '../storage/create-storage.ts'
import { queueTaskIdChannel } from './queue-channel.ts'
import type { FileStore } from '../storage/file-store.ts'
import { createTaskStore, withWrittenRecordCache, type TaskStore } from '../storage/task-store.ts'
import { createLocalTaskEvents, createRedisTaskEvents, withTaskEvents, type TaskEvents } from '../tasks/task-events.ts'
import { createMemoryTaskIndex, createRedisTaskIndex, withTaskIndex, type TaskIndex } from '../tasks/task-index.ts'

/** Where the service keeps things: records, files, tasks and batches, over one set of clients. */
export interface ServiceStorage {
  stores: Stores
  files: FileStore
  /** Every write goes through it, so it tells `taskEvents` of each change. */
  taskStore: TaskStore
  /** Changes of task records, for whoever waits on one (long polls, event streams, webhooks). */
  taskEvents: TaskEvents
  /** Each owner's tasks, newest first (task listing). */
  taskIndex: TaskIndex
  batches: BatchStore
  /** Signed-in console sessions, among the records so every API process of a cluster shares them. */
  consoleSessions: ConsoleSessions
  /** Idempotency keys of submits: in Redis with BullMQ (every API process sees them), else among the records. */
  idempotency: IdempotencyStore
}

/** Creates the stores of `config.storage` on the process's Redis connections. */
export function createServiceStorage(config: Config, redis: RedisConnections): ServiceStorage {
  const stores = createStores(config.storage, { redis })
  const plainRecords = createTaskStore(stores.records)
  const taskIndex = createTaskIndex(config, redis, () => plainRecords.list())
  const records = withTaskIndex(plainRecords, taskIndex)
  // One process writes every record with the local queue: it can answer reads from what it wrote.
  const taskStore = config.queue.driver === 'local' && config.storage.driver !== 'memory' ? withWrittenRecordCache(records) : records
  const taskEvents = createTaskEvents(config, redis)
  return {
    stores,
    files: stores.files,
    taskStore: withTaskEvents(taskStore, taskEvents),
    taskEvents,
    taskIndex,
    batches: createBatchStore(stores.records),
    consoleSessions: createConsoleSessions(stores.records, { sessionHours: config.console.sessionHours }),
    idempotency:
      config.queue.driver === 'bullmq'
        ? createRedisIdempotencyStore(redis.commands(queueRedisUrl(config)), config.queue.prefix)
        : createRecordsIdempotencyStore(stores.records),
  }
}

/** With BullMQ, workers write the records API processes read: changes travel over the queue's Redis. */
function createTaskEvents(config: Config, redis: RedisConnections): TaskEvents {
  if (config.queue.driver === 'local') return createLocalTaskEvents()
  return createRedisTaskEvents(queueTaskIdChannel(config, redis, 'task-events'))
}

/** The owners' index where the records are: Redis when the deployment has one, else this process's memory. */
function createTaskIndex(config: Config, redis: RedisConnections, seed: () => Promise<TaskState[]>): TaskIndex {
  if (config.storage.driver === 'redis')
    return createRedisTaskIndex(redis.commands(config.storage.redis.url), `${config.storage.redis.prefix}:owner-tasks`)
  if (config.queue.driver === 'bullmq')
    return createRedisTaskIndex(redis.commands(queueRedisUrl(config)), `${config.queue.prefix}:owner-tasks`)
  return createMemoryTaskIndex(seed)
}
