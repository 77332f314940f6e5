import { API_PREFIX } from '@mos/sdk/contract'
import { H3 } from 'h3'
import type { ServiceContext } from './context.ts'
import { renderError } from './errors.ts'
import { healthDocument } from './routes/health.ts'

/**
 * What a `worker` process serves on its port: health only (for the orchestrator's probes); no key,
 * no business endpoint. Monitoring endpoints (metrics) register here as well as in `createApp`.
 */
export function createWorkerApp(ctx: ServiceContext): H3 {
  const app = new H3({ onError: (error, event) => renderError(error, event) })
  app.get(`${API_PREFIX}/health`, () => healthDocument(ctx))
  return app
}
