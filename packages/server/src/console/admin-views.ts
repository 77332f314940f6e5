import { listSettings } from '../config/load.ts'
import type { ServiceContext } from '../context.ts'
import { toTaskRecord, type TaskState } from '../tasks/task-state.ts'
import { limitsInForce } from './console-config.ts'

/** What the console shows of a secret that is set. */
export const MASK = '••••'

/**
 * A task as the administrator sees it: the public record plus who owns it (the owner id: a key's
 * digest or `console:admin`, never a key), the options it runs with, its batch and attempts.
 */
export function adminTaskView(ctx: ServiceContext, task: TaskState) {
  return {
    ...toTaskRecord(task, ctx.variant),
    owner: task.owner ?? null,
    options: task.job.options,
    batch_id: task.batch_id ?? null,
    attempts: task.job.attempts,
    expires_at: task.expires_at ?? null,
  }
}

/** GET /admin/queue: tasks waiting and running (cluster-wide with BullMQ), and this process's engine threads. */
export function queueDocument(ctx: ServiceContext) {
  const { queue, pool } = ctx.processing
  return {
    pending: queue.waiting,
    processing: queue.running,
    // An API-only process runs no engine job: it has no threads to show.
    engine_threads: ctx.role === 'api' ? null : { busy: pool.active, total: pool.threads },
  }
}

/**
 * GET /admin/metrics: one sample for the console's live charts, from the service's own metrics. The
 * task totals are the deployment's (every worker counts into the queue's Redis) where it has one;
 * while Redis is away, this process's own, said by `tasks.scope`.
 */
export async function metricsSnapshot(ctx: ServiceContext) {
  const totals = ctx.observability.metrics.totals()
  const { taskTotals } = ctx.processing
  const tasks = await taskTotals.read().then(
    (counts) => ({ ...counts, scope: taskTotals.scope }),
    () => ({ completed: totals.completed, failed: totals.failed, scope: 'process' as const }),
  )
  const queue = queueDocument(ctx)
  const lag = ctx.observability.metrics.registry.getSingleMetric('nodejs_eventloop_lag_seconds')
  const lagSeconds = lag ? ((await lag.get()).values[0]?.value ?? 0) : 0
  const memory = process.memoryUsage()
  const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10
  return {
    time: new Date().toISOString(),
    requests_total: totals.requests,
    tasks: { ...tasks, pending: queue.pending, processing: queue.processing },
    queue_length: queue.pending,
    rss_mb: mb(memory.rss),
    heap_mb: mb(memory.heapUsed),
    event_loop_lag_ms: Math.round(lagSeconds * 1000 * 100) / 100,
  }
}

/** GET /admin/limits: the limits in force, and where each comes from. */
export async function limitsDocument(ctx: ServiceContext) {
  const state = ctx.access.licensing.state()
  return {
    in_force: await limitsInForce(ctx),
    // -1: unlimited in the tier.
    tier: { name: state.tier, status: state.status, message: state.message, limits: { ...state.limits } },
    settings: {
      SERVICE__LIMITS__MAX_FILE_SIZE_MB: ctx.config.limits.maxFileSizeMb,
      SERVICE__LIMITS__MAX_BATCH_SIZE_MB: ctx.config.limits.maxBatchSizeMb,
      SERVICE__LICENSE__TRIAL_MAX_FILES: ctx.config.license.trialMaxFiles,
    },
    rule: 'each limit in force is the tier’s (the trial’s without an active licence), capped by the settings',
  }
}

/** Credentials inside a URL (`redis://user:password@host`): the host shows, the rest does not. */
function maskUrlCredentials(text: string): string {
  return text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/gi, `$1${MASK}@`)
}

function maskSecret(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(() => MASK)
  if (typeof value !== 'string' || value === '') return value
  // A secret URL (Redis with a password) keeps its host: which server matters, its password (or a query's) does not.
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? maskUrlCredentials(value).replace(/\?.*$/, `?${MASK}`) : MASK
}

function maskPlain(value: unknown): unknown {
  if (typeof value === 'string') return maskUrlCredentials(value)
  if (Array.isArray(value)) return value.map(maskPlain)
  return value
}

/**
 * GET /admin/config: every setting in force, secrets masked (API and admin keys, the console's
 * password hash, the webhook secret, the S3 keys, the licence key, credentials inside any URL).
 */
export function maskedConfig(ctx: ServiceContext) {
  return {
    settings: listSettings().map(({ name, path, meta }) => {
      let value: unknown = ctx.config
      for (const key of path) value = (value as Record<string, unknown>)[key]
      const secret = meta.secret === true
      return {
        name,
        value: secret ? maskSecret(value) : maskPlain(value),
        default: meta.default,
        changed: JSON.stringify(value) !== JSON.stringify(meta.default),
        secret,
        doc: meta.doc,
      }
    }),
  }
}
