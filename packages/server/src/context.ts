import { createEnginePool, describeEngines, type EnginePool } from '@mos/engines'
import type { Variant } from '@mos/sdk/contract'
import type { H3Event } from 'h3'
import { createKeyRing, type KeyRing } from './auth.ts'
import { createBatchStore, type BatchStore } from './batches/batch-store.ts'
import type { Config } from './config/schema.ts'
import { createSweepLock } from './maintenance/create-sweep-lock.ts'
import { createSweeper, sweepIntervalMs, type Sweeper } from './maintenance/sweep.ts'
import { checkDeployment, createTaskQueue, queueRedisUrl, type Role } from './queue/create-queue.ts'
import { createLicensing, type Licensing } from './licensing/licensing.ts'
import { createRedisTrialCounter } from './licensing/trial-counter.ts'
import { activeLimits, type ActiveLimits } from './limits/active-limits.ts'
import { createLogger, type Logger } from './logging/create-logger.ts'
import { createRateLimit } from './limits/rate-limit.ts'
import { createMetrics, type Metrics } from './metrics/metrics.ts'
import type { TaskQueue } from './queue/task-queue.ts'
import { createRedisConnections, type RedisConnections } from './redis/redis-connections.ts'
import { createStores, type Stores } from './storage/create-storage.ts'
import type { FileStore } from './storage/file-store.ts'
import { createTaskStore, withWrittenRecordCache, type TaskStore } from './storage/task-store.ts'
import { createTaskLog } from './tasks/task-log.ts'
import { createTaskRunner, type TaskRunner } from './tasks/task-runner.ts'
import { createTaskService, type TaskService } from './tasks/task-service.ts'
import { SERVICE_VERSION } from './version.ts'

/** Runs before a keyed handler, after the key was checked (rate limits, licence checks). */
export type Guard = (event: H3Event, apiKey: string) => void | Promise<void>

export type { ActiveLimits } from './limits/active-limits.ts'

/** Everything the routes use, created once from the configuration and passed down. */
export interface ServiceContext {
  config: Config
  /** The process's logger (made once in main.ts or startServer). */
  logger: Logger
  variant: Variant
  version: string
  startedAt: number
  /** API keys and admin keys: either opens a keyed endpoint. */
  keys: KeyRing
  /** Admin keys only (licence activation). */
  adminKeys: KeyRing
  stores: Stores
  /** The process's Redis connections (one set, shared by every component; opened on first use). */
  redis: RedisConnections
  files: FileStore
  taskStore: TaskStore
  pool: EnginePool
  queue: TaskQueue
  runner: TaskRunner
  tasks: TaskService
  batches: BatchStore
  licensing: Licensing
  metrics: Metrics
  guards: Guard[]
  /** What this process does (SERVICE__SERVER__ROLE). */
  role: Role
  /** The codecs' install facts (variant B capabilities), read from disk once. */
  engines: ReturnType<typeof describeEngines>
  /** Retention, orphan uploads, lost tasks; started by `startServer`. */
  sweeper: Sweeper
  /** Limits of the licence tier in force (refreshed by the licence guard before each keyed request). */
  limits(): ActiveLimits
  /** Stops taking work. With `drain: false`, running tasks are left for the next start to pick up. */
  close(options?: { drain?: boolean }): Promise<void>
}

export interface ServiceContextOptions {
  /** Defaults to a logger made from `config.log`. */
  logger?: Logger
}

/** Creates the service's parts. Nothing runs until `tasks.recover()` or a submission. */
export function createServiceContext(config: Config, options: ServiceContextOptions = {}): ServiceContext {
  checkDeployment(config)
  const logger = options.logger ?? createLogger(config.log)
  const taskLog = createTaskLog(logger)
  const redis = createRedisConnections({ name: `mos:${config.storage.redis.prefix}` })
  const stores = createStores(config.storage, { redis })
  // One process writes every record with the local queue: it can answer reads from what it wrote.
  const records = createTaskStore(stores.records)
  const taskStore = config.queue.driver === 'local' && config.storage.driver !== 'memory' ? withWrittenRecordCache(records) : records
  // First: a bad licence setting stops start-up before any worker thread exists.
  // Several processes share one trial count only through Redis; wherever the deployment has one.
  const trial = config.queue.driver === 'bullmq' ? createRedisTrialCounter(redis.commands(queueRedisUrl(config)), config.queue.prefix, stores.records) : undefined
  const licensing = createLicensing({ config: config.license, records: stores.records, logger, ...(trial ? { trial } : {}) })
  // An API-only process never runs a job: its pool stays empty rather than holding warm threads.
  const pool = createEnginePool({
    threads: config.engines.threads,
    maxHeapMb: config.engines.maxHeapMb,
    prestart: config.engines.prestart && config.server.role !== 'api',
    recycling: { afterJobs: config.engines.recycleAfterJobs, aboveMb: config.engines.recycleAboveMb },
    idleRecycleMs: config.engines.idleRecycleSeconds * 1000,
    onLog: (entry) => logger[entry.level]({ ...entry.fields, thread: 'engine' }, entry.message),
  })
  const metrics = createMetrics({ variant: config.server.variant, queue: () => queue })
  const retentionMs = Math.round(config.tasks.retentionHours * 3_600_000)
  const runner = createTaskRunner({
    tasks: taskStore,
    files: stores.files,
    pool,
    maxAllocationBytes: config.engines.maxAllocationMb * 1024 * 1024,
    timeoutMs: config.tasks.timeoutSeconds * 1000,
    workBudget: { baseSeconds: config.engines.budgetBaseSeconds, secondsPerMb: config.engines.budgetSecondsPerMb },
    retentionMs,
    maxAttempts: config.tasks.maxAttempts,
    onSettled: (task) => metrics.taskSettled(task),
    log: taskLog,
  })
  const queue = createTaskQueue(config, runner.run, redis, logger)
  const sweeper = createSweeper({
    tasks: taskStore,
    files: stores.files,
    queue,
    lock: createSweepLock(config, redis),
    records: stores.records,
    retentionMs,
    orphanAgeMs: config.storage.orphanUploadMinutes * 60_000,
    requeue: config.queue.driver === 'bullmq',
    intervalMs: sweepIntervalMs(retentionMs, config.storage.orphanUploadMinutes * 60_000),
    logger,
  })
  const tasks = createTaskService({ tasks: taskStore, queue, log: taskLog })
  // Variant A only: the contract rate limits per key there, and B does not rate limit.
  const rateLimit =
    config.server.variant === 'A'
      ? createRateLimit({
          perMinute: config.server.rateLimitPerMinute,
          windowSeconds: config.rateLimit.windowSeconds,
          prefix: config.rateLimit.prefix,
          ...(config.rateLimit.redisUrl ? { redis: redis.commands(config.rateLimit.redisUrl) } : {}),
        })
      : undefined
  const guards: Guard[] = [...(rateLimit ? [rateLimit.guard] : []), () => licensing.refresh()]

  return {
    config,
    logger,
    variant: config.server.variant,
    version: SERVICE_VERSION,
    startedAt: Date.now(),
    keys: createKeyRing([...config.auth.apiKeys, ...config.auth.adminKeys]),
    adminKeys: createKeyRing(config.auth.adminKeys),
    stores,
    redis,
    files: stores.files,
    taskStore,
    pool,
    queue,
    runner,
    tasks,
    batches: createBatchStore(stores.records),
    licensing,
    metrics,
    guards,
    role: config.server.role,
    engines: describeEngines(),
    sweeper,
    limits: () => activeLimits(licensing.state().limits, config.limits),
    async close({ drain = true } = {}) {
      await sweeper.stop()
      if (!drain) runner.stop()
      await queue.close({ drain })
      await pool.destroy().catch(() => undefined)
      await trial?.close?.()
      await stores.close()
      // Last: every component above may still send a command while it stops.
      await redis.close()
    },
  }
}
