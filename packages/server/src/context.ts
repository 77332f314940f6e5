import type { Variant } from '@mos/sdk/contract'
import type { H3Event } from 'h3'
import type { Config } from './config/schema.ts'
import { createServiceAccess, type ServiceAccess } from './context/service-access.ts'
import { createServiceObservability, type ServiceObservability } from './context/service-observability.ts'
import { createServiceProcessing, type ServiceProcessing } from './context/service-processing.ts'
import { createServiceStorage, type ServiceStorage } from './context/service-storage.ts'
import { activeLimits, type ActiveLimits } from './limits/active-limits.ts'
import type { Logger } from './logging/create-logger.ts'
import { checkDeployment, type Role } from './queue/create-queue.ts'
import { createRedisConnections } from './redis/redis-connections.ts'
import { SERVICE_VERSION } from './version.ts'

/** Runs before a keyed handler, after the key was checked (rate limits, licence checks). */
export type Guard = (event: H3Event, apiKey: string) => void | Promise<void>

export type { ActiveLimits } from './limits/active-limits.ts'
export type { ServiceAccess, ServiceObservability, ServiceProcessing, ServiceStorage }

/**
 * Everything the routes use, created once from the configuration and passed down: what the
 * process is, and four parts each made by its own factory (storage, processing, access,
 * observability).
 */
export interface ServiceContext {
  config: Config
  variant: Variant
  version: string
  startedAt: number
  /** What this process does (SERVICE__SERVER__ROLE). */
  role: Role
  /** Set once the process began to stop (SIGTERM, `close()`): GET /readyz answers 503 `stopping` from then on. */
  stopping: boolean
  storage: ServiceStorage
  processing: ServiceProcessing
  access: ServiceAccess
  observability: ServiceObservability
  /**
   * Limits of the licence tier in force (refreshed by the licence guard before each keyed request),
   * over the configured ones: on the context itself, since most routes ask for it.
   */
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
  const redis = createRedisConnections({ name: `mos:${config.storage.redis.prefix}` })
  // The metrics read the queue's depth when collected; the queue is part of processing, made below.
  let processing: ServiceProcessing | undefined
  const observability = createServiceObservability(config, {
    ...(options.logger ? { logger: options.logger } : {}),
    queue: () => processing!.queue,
  })
  const storage = createServiceStorage(config, redis)
  // First: a bad licence setting stops start-up before any worker thread exists.
  const access = createServiceAccess(config, { storage, redis, logger: observability.logger })
  processing = createServiceProcessing(config, { storage, redis, observability })
  const { sweeper, runner, queue, pool, webhooks } = processing

  return {
    config,
    variant: config.server.variant,
    version: SERVICE_VERSION,
    startedAt: Date.now(),
    stopping: false,
    role: config.server.role,
    storage,
    processing,
    access,
    observability,
    limits: () => activeLimits(access.licensing.state().limits, config.limits),
    async close({ drain = true } = {}) {
      // First: waiting requests answer now, before their connections are cut.
      await storage.taskEvents.close()
      await sweeper.stop()
      webhooks.close()
      if (!drain) runner.stop()
      await queue.close({ drain })
      await pool.destroy().catch(() => undefined)
      await access.trial?.close?.()
      await storage.stores.close()
      // Last: every component above may still send a command while it stops.
      await redis.close()
    },
  }
}
