import { healthSchemaA, healthSchemaB, type Variant } from './contract/index.ts'
import { MosError } from './errors.ts'
import { createTransport, type RequestOptions } from './request.ts'

/** Options of `detectVariant`. */
export interface DetectVariantOptions extends RequestOptions {
  fetch?: typeof globalThis.fetch
}

/**
 * Asks a live deployment which variant it serves, from the shape of its health document (needs
 * no key): `{ status: 'ok' }` is A, `{ status: 'healthy', version, uptime_seconds, ... }` is B.
 * @example
 * const variant = await detectVariant('http://localhost:8080')
 * const mos = createClient({ baseURL, apiKey, variant })
 */
export async function detectVariant(baseURL: string, options: DetectVariantOptions = {}): Promise<Variant> {
  const { fetch, timeout, maxRetries, ...call } = options
  const transport = createTransport({ baseURL, fetch, timeout: timeout ?? 30_000, maxRetries: maxRetries ?? 2 })
  const health = await transport.request({ method: 'GET', path: '/health', responseType: 'json' }, call)
  if (healthSchemaB.safeParse(health).success) return 'B'
  if (healthSchemaA.safeParse(health).success) return 'A'
  throw new MosError(`[mos] ${baseURL} answered /api/v1/health with a document of neither variant: ${JSON.stringify(health).slice(0, 200)}`)
}
