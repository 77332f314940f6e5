import { createEnginePool, describeEngines, type EnginePool } from '@mos/engines'
import type { OperationCatalog } from '../routes/operations.ts'
import { engineOperationCatalog } from './operation-catalog.ts'
import type { Config } from '../config/schema.ts'
import { createSweepLock } from '../maintenance/create-sweep-lock.ts'
import { createSweeper, sweepIntervalMs, type Sweeper } from '../maintenance/sweep.ts'
import { createTaskQueue } from '../queue/create-queue.ts'
import type { TaskQueue } from '../queue/task-queue.ts'
import { createTaskTotals, type TaskTotals } from '../metrics/task-totals.ts'
import type { RedisConnections } from '../redis/redis-connections.ts'
import { createLocalTaskCancels, createRedisTaskCancels, type TaskCancels } from '../tasks/task-cancels.ts'
import { createTaskRunner, type TaskRunner } from '../tasks/task-runner.ts'
import { createTaskService, type TaskService } from '../tasks/task-service.ts'
import { createWebhookSender, type WebhookSender } from '../webhooks/webhook-sender.ts'
import { queueTaskIdChannel } from './queue-channel.ts'
import type { ServiceObservability } from './service-observability.ts'
import type { Logger } from '../logging/create-logger.ts'
import type { ServiceStorage } from './service-storage.ts'
import { fsRecordsFolder } from '../storage/create-storage.ts'
import { removeStaleRecordParts } from '../storage/fs-atomic-driver.ts'

/** What does the work: the engine pool, the queue and runner feeding it, and the sweep after it. */
export interface ServiceProcessing {
  pool: EnginePool
  queue: TaskQueue
  runner: TaskRunner
  tasks: TaskService
  /** The engines' operation registry as the submit routes see it (input formats, option keys). */
  operations: OperationCatalog
  /** The codecs' install facts (variant B capabilities), read from disk once. */
  engines: ReturnType<typeof describeEngines>
  /** Retention, orphan uploads, lost tasks; started by `startServer`. */
  sweeper: Sweeper
  /** Webhook deliveries of finished tasks, from the process that finished them. */
  webhooks: WebhookSender
  /** Completed and failed tasks of the deployment (the console's metrics). */
  taskTotals: TaskTotals
}

/** What the processing part is built over. */
interface ProcessingParts {
  storage: ServiceStorage
  redis: RedisConnections
  observability: ServiceObservability
}

/** Creates the processing part over the storage and observability parts. Nothing runs until a task is queued. */
export function createServiceProcessing(config: Config, parts: ProcessingParts): ServiceProcessing {
  const { storage, redis, observability } = parts
  const { logger, taskLog, metrics } = observability
  const pool = createPool(config, logger)
  const retentionMs = Math.round(config.tasks.retentionHours * 3_600_000)
  const webhooks = createWebhooks(config, logger, storage)
  const cancels = createTaskCancels(config, redis)
  const taskTotals = createTaskTotals(config, redis, metrics)
  const runner = createTaskRunner({
    cancels,
    tasks: storage.taskStore,
    files: storage.files,
    pool,
    maxAllocationBytes: config.engines.maxAllocationMb * 1024 * 1024,
    timeoutMs: config.tasks.timeoutSeconds * 1000,
    workBudget: { baseSeconds: config.engines.budgetBaseSeconds, secondsPerMb: config.engines.budgetSecondsPerMb },
    retentionMs,
    maxAttempts: config.tasks.maxAttempts,
    onSettled: (task) => {
      metrics.taskSettled(task)
      webhooks.notify(task)
      if (task.status === 'completed' || task.status === 'failed')
        taskTotals.add(task.status).catch((error: unknown) => logger.warn({ error: String(error) }, 'task totals not counted'))
    },
    log: taskLog,
  })
  const queue = createTaskQueue(config, runner.run, redis, logger)
  const sweeper = createSweeperOf(config, parts, queue, retentionMs)
  return {
    pool,
    queue,
    runner,
    tasks: createTaskService({ tasks: storage.taskStore, queue, log: taskLog, files: storage.files, cancels, retentionMs }),
    operations: engineOperationCatalog(),
    engines: describeEngines(),
    sweeper,
    webhooks,
    taskTotals,
  }
}

function createPool(config: Config, logger: Logger): EnginePool {
  // An API-only process never runs a job: its pool stays empty rather than holding warm threads.
  return createEnginePool({
    threads: config.engines.threads,
    maxHeapMb: config.engines.maxHeapMb,
    prestart: config.engines.prestart && config.server.role !== 'api',
    recycling: { afterJobs: config.engines.recycleAfterJobs, aboveMb: config.engines.recycleAboveMb },
    idleRecycleMs: config.engines.idleRecycleSeconds * 1000,
    onLog: (entry) => logger[entry.level]({ ...entry.fields, thread: 'engine' }, entry.message),
  })
}

function createWebhooks(config: Config, logger: Logger, storage: ServiceStorage): WebhookSender {
  return createWebhookSender({
    secret: config.webhooks.secret,
    allowPrivate: config.webhooks.allowPrivate,
    variant: config.server.variant,
    retryMs: config.webhooks.retryHours * 3_600_000,
    firstWaitMs: config.webhooks.firstRetrySeconds * 1000,
    logger,
    outbox: storage.stores.records,
  })
}

function createSweeperOf(config: Config, parts: ProcessingParts, queue: TaskQueue, retentionMs: number): Sweeper {
  const { storage, redis, observability } = parts
  const orphanAgeMs = config.storage.orphanUploadMinutes * 60_000
  return createSweeper({
    tasks: storage.taskStore,
    files: storage.files,
    queue,
    lock: createSweepLock(config, redis),
    records: storage.stores.records,
    ...(config.storage.driver === 'fs'
      ? { recordParts: (olderThanMs: number) => removeStaleRecordParts(fsRecordsFolder(config.storage), olderThanMs) }
      : {}),
    sessions: storage.consoleSessions,
    retentionMs,
    orphanAgeMs,
    requeue: config.queue.driver === 'bullmq',
    intervalMs: sweepIntervalMs(retentionMs, orphanAgeMs),
    logger: observability.logger,
  })
}

/** With BullMQ any worker process may run the task a client cancels: cancels travel over the queue's Redis. */
function createTaskCancels(config: Config, redis: RedisConnections): TaskCancels {
  if (config.queue.driver === 'local') return createLocalTaskCancels()
  return createRedisTaskCancels(queueTaskIdChannel(config, redis, 'task-cancels'))
}
