import { API_PREFIX } from '@mos/sdk/contract'
import { defineHandler, H3 } from 'h3'
import { createKeyCheck } from './auth.ts'
import type { ServiceContext } from './context.ts'
import { renderError } from './errors.ts'
import { applyHttpPolicy } from './http-policy.ts'
import { createRequestLog } from './logging/request-log.ts'
import { healthDocument } from './routes/health.ts'
import { metricsResponse } from './routes/metrics.ts'
import { mountProbes, PROBE_PATHS } from './routes/probes.ts'

/**
 * What a `worker` process serves on its port: health, /livez and /readyz (for the orchestrator's probes) and metrics
 * (its own task counters, for the scraper); no business endpoint.
 */
export function createWorkerApp(ctx: ServiceContext): H3 {
  const requests = createRequestLog({ logger: ctx.observability.logger, quietPaths: PROBE_PATHS })
  const app = new H3({
    // As the API's app: an unhandled error goes on the request's JSON line, not to console.error.
    silent: true,
    onRequest: requests.onRequest,
    onResponse: requests.onResponse,
    onError: (error, event) => renderError(error, event),
  })
  mountProbes(app, ctx)
  const checkKey = createKeyCheck(ctx.access.keys, ctx.config)
  app.get(`${API_PREFIX}/health`, () => healthDocument(ctx))
  app.get(
    `${API_PREFIX}/metrics`,
    defineHandler(async (event) => {
      // Same rule as on API processes (SERVICE__METRICS__REQUIRE_KEY), wrong keys throttled alike.
      if (ctx.config.metrics.requireKey) await checkKey(event)
      return metricsResponse(ctx)
    }),
  )
  // The same security headers, 405s and CORS as the API (derived from the routes above).
  applyHttpPolicy(app, { corsOrigins: ctx.config.server.corsOrigins })
  return app
}
