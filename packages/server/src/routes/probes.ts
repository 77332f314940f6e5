import type { StatsFs } from 'node:fs'
import { statfs } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import type { H3 } from 'h3'
import type { ServiceContext } from '../context.ts'
import { requestFacts } from '../logging/request-log.ts'
import { filesDriverOf } from '../storage/create-storage.ts'
import { withTimeout } from '../with-timeout.ts'
import { errorText } from '../error-text.ts'

/** One readiness check: whether it passed, how long it took, and why not. */
export interface ProbeCheck {
  ok: boolean
  ms: number
  error?: string
  [fact: string]: unknown
}

export interface Readiness {
  status: 'ready' | 'not ready' | 'stopping'
  /** Names of the checks that failed. */
  failed: string[]
  checks: Record<string, ProbeCheck>
}

/** Paths of the probes; outside the contract's prefix, like an orchestrator expects them. */
export const PROBE_PATHS = ['/livez', '/readyz'] as const

async function timed(timeoutMs: number, work: () => Promise<Record<string, unknown> | undefined>): Promise<ProbeCheck> {
  const start = performance.now()
  try {
    const facts = await withTimeout(work(), timeoutMs, `no answer in ${timeoutMs} ms`)
    return { ok: true, ms: Math.round(performance.now() - start), ...facts }
  } catch (error) {
    return { ok: false, ms: Math.round(performance.now() - start), error: errorText(error) }
  }
}

/** The file system `path` will be on: the data folder is made on first write, so it may not exist yet. */
async function statfsOfNearest(path: string): Promise<StatsFs> {
  try {
    return await statfs(path)
  } catch (error) {
    const parent = dirname(path)
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || parent === path) throw error
    return statfsOfNearest(parent)
  }
}

/**
 * A process told to stop is not ready whatever its checks say: a balancer still probing it on an open
 * connection takes it out, while its requests in flight and running tasks finish.
 */
const STOPPING: Readiness = {
  status: 'stopping',
  failed: ['stopping'],
  checks: {
    stopping: {
      ok: false,
      ms: 0,
      error: 'the process is stopping: it takes no new connection, and finishes its requests in flight and running tasks',
    },
  },
}

/**
 * What GET /readyz checks (none once the process is stopping), all at once, each with its own time-out: records and files answer, the
 * queue's Redis answers (a local queue lives in this process), the engine pool is up (roles that run
 * tasks), and the disk of the fs data folder has room (when records or files are on fs).
 */
export async function readiness(ctx: ServiceContext): Promise<Readiness> {
  if (ctx.stopping) return STOPPING
  const { config } = ctx
  const timeoutMs = config.health.checkTimeoutMs
  const usesFs = config.storage.driver === 'fs' || filesDriverOf(config.storage) === 'fs'
  const entries = await Promise.all(
    [
      [
        'storage',
        timed(timeoutMs, async () => {
          await ctx.storage.stores.ping()
          return { records: config.storage.driver, files: filesDriverOf(config.storage) }
        }),
      ] as const,
      [
        'queue',
        timed(timeoutMs, async () => {
          await ctx.processing.queue.ping?.()
          return { driver: config.queue.driver }
        }),
      ] as const,
      [
        'engines',
        timed(timeoutMs, async () => {
          if (ctx.role === 'api') return { used: false }
          const status = ctx.processing.pool.status()
          if (status.destroyed) throw new Error('engine pool is stopped')
          if (config.engines.prestart && status.liveThreads === 0) throw new Error('no engine thread is running')
          return { threads: ctx.processing.pool.threads, liveThreads: status.liveThreads, recycledThreads: status.recycledThreads }
        }),
      ] as const,
      ...(usesFs && config.health.minFreeDiskMb > 0
        ? [
            [
              'disk',
              timed(timeoutMs, async () => {
                const stats = await statfsOfNearest(resolve(config.storage.fs.base))
                const freeMb = Math.floor((stats.bavail * stats.bsize) / 2 ** 20)
                if (freeMb < config.health.minFreeDiskMb)
                  throw new Error(`${freeMb} MB free under ${config.storage.fs.base}, below ${config.health.minFreeDiskMb} MB`)
                return { freeMb, minFreeMb: config.health.minFreeDiskMb }
              }),
            ] as const,
          ]
        : []),
    ].map(async ([name, check]) => [name, await check] as const),
  )
  const checks = Object.fromEntries(entries)
  const failed = entries.filter(([, check]) => !check.ok).map(([name]) => name)
  return { status: failed.length === 0 ? 'ready' : 'not ready', failed, checks }
}

/**
 * Adds GET /livez (the process answers: nothing else is checked, so a slow Redis never gets a
 * healthy process restarted, nor a stopping one killed before its drain is done) and GET /readyz
 * (200 when every check passes, else 503 naming the failed checks, or `stopping`) to an app; both open, outside the contract's prefix.
 */
export function mountProbes(app: H3, ctx: ServiceContext): void {
  app.get('/livez', () => ({ status: 'alive', uptime_seconds: Math.floor((Date.now() - ctx.startedAt) / 1000) }))
  app.get('/readyz', async (event) => {
    const result = await readiness(ctx)
    if (result.status === 'stopping') requestFacts(event).error = 'not ready: stopping'
    else if (result.failed.length > 0)
      requestFacts(event).error = `not ready: ${result.failed.map((name) => `${name} (${result.checks[name]?.error})`).join(', ')}`
    return Response.json(result, { status: result.status === 'ready' ? 200 : 503, headers: { 'cache-control': 'no-store' } })
  })
}
