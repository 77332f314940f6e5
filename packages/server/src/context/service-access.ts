import { createKeyRing, type KeyRing } from '../auth.ts'
import type { Config } from '../config/schema.ts'
import type { Guard } from '../context.ts'
import { createLicensing, type Licensing } from '../licensing/licensing.ts'
import { createRedisTrialCounter, type TrialCounter } from '../licensing/trial-counter.ts'
import { createRateLimit } from '../limits/rate-limit.ts'
import type { Logger } from '../logging/create-logger.ts'
import { queueRedisUrl } from '../queue/create-queue.ts'
import type { RedisConnections } from '../redis/redis-connections.ts'
import type { ServiceStorage } from './service-storage.ts'

/** Who may do what: keys, the licence and its trial count, and the guards run before keyed handlers. */
export interface ServiceAccess {
  /** API keys and admin keys: either opens a keyed endpoint. */
  keys: KeyRing
  /** Admin keys only (licence activation). */
  adminKeys: KeyRing
  licensing: Licensing
  /** Run before every keyed handler, in order: the rate limit (per key, variant A), then the licence. */
  guards: Guard[]
  /**
   * The guards that count no key, run before the console's signed-in handlers: the licence. A
   * session is no API key, so the console is not rate limited (docs/console.md).
   */
  sessionGuards: Guard[]
  /** The shared trial count, where the deployment has Redis; closed with the service. */
  trial?: TrialCounter
}

/** Creates the access part. A bad licence setting throws here, before any worker thread exists. */
export function createServiceAccess(
  config: Config,
  parts: { storage: ServiceStorage; redis: RedisConnections; logger: Logger },
): ServiceAccess {
  const { stores } = parts.storage
  // Several processes share one trial count only through Redis; wherever the deployment has one.
  const trial =
    config.queue.driver === 'bullmq'
      ? createRedisTrialCounter(parts.redis.commands(queueRedisUrl(config)), config.queue.prefix, stores.records)
      : undefined
  const licensing = createLicensing({ config: config.license, records: stores.records, logger: parts.logger, ...(trial ? { trial } : {}) })
  // Variant A only: the contract rate limits per key there, and B does not rate limit.
  const rateLimit =
    config.server.variant === 'A'
      ? createRateLimit({
          perMinute: config.server.rateLimitPerMinute,
          windowSeconds: config.rateLimit.windowSeconds,
          prefix: config.rateLimit.prefix,
          ...(config.rateLimit.redisUrl ? { redis: parts.redis.commands(config.rateLimit.redisUrl) } : {}),
        })
      : undefined
  // Reads the licence activated through the API again (every few seconds): an activation on another node reaches this one.
  const licenceGuard: Guard = () => licensing.refresh()
  return {
    keys: createKeyRing([...config.auth.apiKeys, ...config.auth.adminKeys]),
    adminKeys: createKeyRing(config.auth.adminKeys),
    licensing,
    guards: [...(rateLimit ? [rateLimit.guard] : []), licenceGuard],
    sessionGuards: [licenceGuard],
    ...(trial ? { trial } : {}),
  }
}
