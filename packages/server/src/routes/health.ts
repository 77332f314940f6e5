import type { HealthA, HealthB } from '@mos/sdk/contract'
import type { ServiceContext } from '../context.ts'

/** GET /api/v1/health (no key): the variant's health document (2.5). */
export function healthDocument(ctx: ServiceContext): HealthA | HealthB {
  if (ctx.variant === 'A') return { status: 'ok' }
  return {
    status: 'healthy',
    version: ctx.version,
    uptime_seconds: Math.floor((Date.now() - ctx.startedAt) / 1000),
    active_tasks: ctx.processing.queue.running,
    queue_length: ctx.processing.queue.waiting,
  }
}
