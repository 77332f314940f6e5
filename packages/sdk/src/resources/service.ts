import type { Variant, VariantDocuments } from '../contract/index.ts'
import type { RequestOptions, Transport } from '../request.ts'

/** Health, capabilities and metrics (4.1, 4.2, 4.15); the first two have the variant's shape. */
export interface ServiceResource<V extends Variant> {
  /** GET /health: `{ status: 'ok' }` (A) or status, version, uptime and queue figures (B). Needs no key. */
  health(options?: RequestOptions): Promise<VariantDocuments[V]['health']>
  /** GET /capabilities: engines, formats and features (A) or per-engine details and license (B). */
  capabilities(options?: RequestOptions): Promise<VariantDocuments[V]['capabilities']>
  /** GET /metrics: Prometheus text format. */
  metrics(options?: RequestOptions): Promise<string>
}

/** Creates the service calls on a transport. */
export function createService<V extends Variant>(transport: Transport): ServiceResource<V> {
  return {
    health: async (options) =>
      (await transport.request({ method: 'GET', path: '/health', responseType: 'json' }, options)) as VariantDocuments[V]['health'],
    capabilities: async (options) =>
      (await transport.request(
        { method: 'GET', path: '/capabilities', responseType: 'json' },
        options,
      )) as VariantDocuments[V]['capabilities'],
    metrics: (options) => transport.request({ method: 'GET', path: '/metrics', responseType: 'text' }, options),
  }
}
