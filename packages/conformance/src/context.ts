import type { TaskType, Variant } from '@mos/sdk/contract'
import type { Settings } from './check.ts'
import { createFixtures, type Fixtures } from './fixtures/index.ts'
import type { HttpClient } from './http.ts'

/** Everything a check gets: the deployment, its variant, the settings given, shared fixtures. */
export interface RunContext {
  variant: Variant
  http: HttpClient
  settings: Settings
  /** Longest wait for one task to finish. */
  taskTimeoutMs: number
  /** Interval between polls of a task. */
  pollIntervalMs: number
  fixtures(): Promise<Fixtures>
  /** The capabilities document as served (undefined when it could not be read as JSON). */
  capabilities(): Promise<Record<string, unknown> | undefined>
  /**
   * Runs `fn` once per key for the whole run and shares its promise, so checks that need the same
   * completed task do not each submit one. A failure is shared too: every dependent check fails.
   */
  once<T>(key: string, fn: () => Promise<T>): Promise<T>
}

export interface RunContextOptions {
  variant: Variant
  http: HttpClient
  settings?: Settings
  taskTimeoutMs?: number
  pollIntervalMs?: number
}

export function createRunContext(options: RunContextOptions): RunContext {
  const memo = new Map<string, Promise<unknown>>()
  const once = <T>(key: string, fn: () => Promise<T>): Promise<T> => {
    if (!memo.has(key)) {
      const promise = fn()
      promise.catch(() => undefined) // observed by every caller; never an unhandled rejection
      memo.set(key, promise)
    }
    return memo.get(key) as Promise<T>
  }
  return {
    variant: options.variant,
    http: options.http,
    settings: options.settings ?? {},
    taskTimeoutMs: options.taskTimeoutMs ?? 120_000,
    pollIntervalMs: options.pollIntervalMs ?? 100,
    fixtures: () => once('fixtures', createFixtures),
    capabilities: () =>
      once('capabilities', async () => {
        const response = await options.http.get('/capabilities')
        const body = response.status === 200 ? response.json() : undefined
        return body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined
      }),
    once,
  }
}

/** Submit endpoint of each operation. */
export const OPERATION_PATHS: Record<TaskType, string> = {
  compress: '/compress',
  convert: '/convert',
  repair: '/repair',
  diagnose: '/diagnose',
  texture_optimize: '/textures/optimize',
  texture_ktx2: '/textures/ktx2',
}

/** Endpoint used to tell whether a non-operation group is served at all. */
const ENDPOINT_PROBES = {
  batch: ['POST', '/batch/compress'],
  license: ['GET', '/license/info'],
  metrics: ['GET', '/metrics'],
} as const

/**
 * Whether the deployment serves an endpoint: asked without a key, a served endpoint answers 401
 * (or 200/400 when it is public), one that does not exist answers 404 or 405.
 */
export function isServed(ctx: RunContext, method: string, path: string): Promise<boolean> {
  return ctx.once(`served ${method} ${path}`, async () => {
    const response = await ctx.http.request(method, path, { key: null })
    return response.status !== 404 && response.status !== 405
  })
}

/**
 * Why a check needing `feature` cannot run here, or undefined when it can. Variant A advertises its
 * operations in capabilities.features; variant B has no such list, so its endpoint is probed. An
 * unreadable capabilities document counts as advertising everything: the checks then run and fail
 * loudly rather than being skipped.
 */
export async function featureUnavailable(ctx: RunContext, feature: TaskType): Promise<string | undefined> {
  if (ctx.variant === 'A') {
    const features = (await ctx.capabilities())?.features
    if (Array.isArray(features) && !features.includes(feature)) return `"${feature}" is not advertised in capabilities.features`
    return undefined
  }
  const path = OPERATION_PATHS[feature]
  if (!(await isServed(ctx, 'POST', path))) return `POST /api/v1${path} is not served (404)`
  return undefined
}

/** Why a check needing an endpoint group cannot run here, or undefined. */
export async function endpointUnavailable(ctx: RunContext, endpoint: keyof typeof ENDPOINT_PROBES): Promise<string | undefined> {
  const [method, path] = ENDPOINT_PROBES[endpoint]
  if (!(await isServed(ctx, method, path))) return `${method} /api/v1${path} is not served (404)`
  return undefined
}
