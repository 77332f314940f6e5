import type { ServiceContext } from '../context.ts'

/** GET /api/v1/metrics: Prometheus text of this service's registry (4.15). */
export async function metricsResponse(ctx: ServiceContext): Promise<Response> {
  const registry = ctx.observability.metrics.registry
  return new Response(await registry.metrics(), { headers: { 'content-type': registry.contentType } })
}
