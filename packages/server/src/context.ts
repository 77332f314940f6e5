import { createEnginePool, type EnginePool } from '@mos/engines'
import type { Variant } from '@mos/sdk/contract'
import type { H3Event } from 'h3'
import { createKeyRing, type KeyRing } from './auth.ts'
import type { Config } from './config/schema.ts'
import { createSweepLock } from './maintenance/create-sweep-lock.ts'
import { createSweeper, sweepIntervalMs, type Sweeper } from './maintenance/sweep.ts'
import { checkDeployment, createTaskQueue, type Role } from './queue/create-queue.ts'
import type { TaskQueue } from './queue/task-queue.ts'
import { createStores, type Stores } from './storage/create-storage.ts'
import type { FileStore } from './storage/file-store.ts'
import { createTaskStore, type TaskStore } from './storage/task-store.ts'
import { createTaskRunner, type TaskRunner } from './tasks/task-runner.ts'
import { createTaskService, type TaskService } from './tasks/task-service.ts'
import { SERVICE_VERSION } from './version.ts'

/** Runs before a keyed handler, after the key was checked (rate limits, licence checks). */
export type Guard = (event: H3Event, apiKey: string) => void | Promise<void>

/** Limits in force for the next request (the licence tier may change them at run time). */
export interface ActiveLimits {
  maxFileBytes: number
}

/** Everything the routes use, created once from the configuration and passed down. */
export interface ServiceContext {
  config: Config
  variant: Variant
  version: string
  startedAt: number
  keys: KeyRing
  stores: Stores
  files: FileStore
  taskStore: TaskStore
  pool: EnginePool
  queue: TaskQueue
  runner: TaskRunner
  tasks: TaskService
  guards: Guard[]
  /** What this process does (SERVICE__SERVER__ROLE). */
  role: Role
  /** Retention, orphan uploads, lost tasks; started by `startServer`. */
  sweeper: Sweeper
  limits(): ActiveLimits
  /** Stops taking work. With `drain: false`, running tasks are left for the next start to pick up. */
  close(options?: { drain?: boolean }): Promise<void>
}

/** Creates the service's parts. Nothing runs until `tasks.recover()` or a submission. */
export function createServiceContext(config: Config): ServiceContext {
  checkDeployment(config)
  const stores = createStores(config.storage)
  const taskStore = createTaskStore(stores.records)
  const pool = createEnginePool({ threads: config.engines.threads, maxHeapMb: config.engines.maxHeapMb })
  const retentionMs = Math.round(config.tasks.retentionHours * 3_600_000)
  const runner = createTaskRunner({
    tasks: taskStore,
    files: stores.files,
    pool,
    timeoutMs: config.tasks.timeoutSeconds * 1000,
    retentionMs,
    maxAttempts: config.tasks.maxAttempts,
  })
  const queue = createTaskQueue(config, runner.run)
  const sweeper = createSweeper({
    tasks: taskStore,
    files: stores.files,
    queue,
    lock: createSweepLock(config),
    retentionMs,
    orphanAgeMs: config.storage.orphanUploadMinutes * 60_000,
    requeue: config.queue.driver === 'bullmq',
    intervalMs: sweepIntervalMs(retentionMs, config.storage.orphanUploadMinutes * 60_000),
  })
  const tasks = createTaskService({ tasks: taskStore, queue })
  const maxFileBytes = config.limits.maxFileSizeMb * 1024 * 1024

  return {
    config,
    variant: config.server.variant,
    version: SERVICE_VERSION,
    startedAt: Date.now(),
    keys: createKeyRing(config.auth.apiKeys),
    stores,
    files: stores.files,
    taskStore,
    pool,
    queue,
    runner,
    tasks,
    guards: [],
    role: config.server.role,
    sweeper,
    limits: () => ({ maxFileBytes }),
    async close({ drain = true } = {}) {
      await sweeper.stop()
      if (!drain) runner.stop()
      await queue.close({ drain })
      await pool.destroy().catch(() => undefined)
      await stores.close()
    },
  }
}
