import type { H3 } from 'h3'
import { createApp } from './app.ts'
import { loadConfig } from './config/load.ts'
import type { Config } from './config/schema.ts'
import { createServiceContext, type ServiceContext } from './context.ts'
import { createLogger, type Logger } from './logging/create-logger.ts'
import { servesApi } from './queue/create-queue.ts'
import { checkRedisAtStart } from './redis/redis-at-start.ts'
import { currentRuntime } from './runtime.ts'
import { createWorkerApp } from './worker-app.ts'
import { withTimeout } from './with-timeout.ts'
import { errorText } from './error-text.ts'
import type { ListenerRefusal } from './listener-answer.ts'
import type { ListenerClosed } from './node-listener.ts'
import { securityHeaders } from './security-headers.ts'

export interface StartServerOptions {
  /** SERVICE__* variables; defaults to process.env. */
  env?: Record<string, string | undefined>
  /** An already loaded configuration (wins over `env`). */
  config?: Config
  /** The process's logger; defaults to one made from the configuration's `log` settings. */
  logger?: Logger
}

export interface RunningServer {
  url: string
  port: number
  context: ServiceContext
  /** Stops listening and the workers. With `drain: false`, running tasks resume on the next start. */
  close(options?: { drain?: boolean }): Promise<void>
}

/**
 * Starts the service for its role (`all`, `api`, `worker`): picks up unfinished tasks, starts the
 * sweep, then listens (a worker serves health only).
 *
 * ```ts
 * const server = await startServer({ env: { SERVICE__AUTH__API_KEYS: 'key', SERVICE__SERVER__PORT: '0' } })
 * await fetch(`${server.url}/api/v1/health`)
 * await server.close()
 * ```
 */
export async function startServer(options: StartServerOptions = {}): Promise<RunningServer> {
  const config = options.config ?? loadConfig(options.env ?? process.env)
  const logger = options.logger ?? createLogger({ ...config.log, base: { role: config.server.role } })
  const context = createServiceContext(config, { logger })
  try {
    await checkRedisAtStart(config)
    await context.processing.queue.ready?.()
    // The local queue lives in this process: re-queue what the last run left. A shared queue keeps
    // its jobs itself (and the sweep re-queues any task that lost its job).
    if (config.queue.driver === 'local') await context.processing.tasks.recover()
    // Webhooks are sent by the processes that finish tasks; an API process leaves them to those.
    if (config.server.role !== 'api') await context.processing.webhooks.recover()
  } catch (error) {
    await abandon(context)
    throw error
  }
  context.processing.sweeper.start()
  const app = servesApi(config.server.role) ? createApp(context) : createWorkerApp(context)
  let listener: Listener
  try {
    listener = await listen(app, {
      port: config.server.port,
      host: config.server.host,
      keepAliveTimeoutMs: config.server.keepAliveTimeoutMs,
      headersTimeoutMs: config.server.headersTimeoutMs,
      shutdownGraceMs: config.server.shutdownGraceMs,
      // The listeners' own answers (a 408, 431, the grace's 503) carry the security headers of the app's.
      answerHeaders: securityHeaders({ cors: config.server.corsOrigins.length > 0 }),
      // No request reached the app, which logs every request it answers: the line is written here.
      onRefusal: (refusal) => context.observability.logger[refusal.status >= 500 ? 'warn' : 'info'](refusal, 'request'),
      onHandlerError: (error) =>
        context.observability.logger.error({ error: errorText(error), stack: (error as Error)?.stack }, 'request handler failed'),
    })
  } catch (error) {
    await abandon(context)
    throw error
  }
  const port = listener.port
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    context,
    async close(closeOptions) {
      // From now on /readyz says so, on the connections still open, while requests in flight finish.
      context.stopping = true
      // First: long polls and event streams answer now, before the listener cuts their connections.
      await context.storage.taskEvents.close()
      logDrained(context, await listener.close())
      await context.close(closeOptions)
    },
  }
}

interface Listener {
  port: number
  /** Resolves with how many requests in flight the grace cut. */
  close(): Promise<ListenerClosed>
}

type ListenOptions = {
  port: number
  host: string
  keepAliveTimeoutMs: number
  headersTimeoutMs: number
  shutdownGraceMs: number
  answerHeaders: Readonly<Record<string, string>>
  onRefusal: (refusal: ListenerRefusal) => void
  onHandlerError: (error: unknown) => void
}

/** Says how the requests in flight ended: all answered, or how many the grace cut. */
function logDrained(context: ServiceContext, closed: ListenerClosed): void {
  const { logger } = context.observability
  const graceMs = context.config.server.shutdownGraceMs
  const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`
  // A submit recording its task when the grace ended was waited for: it answered, past the grace.
  const waited = closed.waited ? { waited: closed.waited } : {}
  const late = closed.waited ? `; ${plural(closed.waited, 'request')} recording a task answered after the grace` : ''
  if (closed.cut === 0 && closed.refused === 0) logger.info({ cut: 0, ...waited }, `requests in flight finished${late}`)
  else {
    // The 503 tells the client to send again: the count says how many were told, not only cut.
    const refused =
      closed.refused > 0
        ? `; ${plural(closed.refused, 'connection')} with no answer under way first answered 503 (send the request again)`
        : ''
    logger.warn(
      { cut: closed.cut, refused: closed.refused, ...waited, graceMs },
      `shutdown grace of ${graceMs} ms over: ${plural(closed.cut, 'request')} still in flight cut${refused}${late} (SERVICE__SERVER__SHUTDOWN_GRACE_MS)`,
    )
  }
}

/**
 * Serves the app with the runtime's own server. On Node, `node:http` with the hardening of
 * node-listener.ts (431, 408, `Expect: 100-continue`, lingering close); on Deno and Bun, their
 * native servers with h3's `app.fetch`. Each is imported only where it runs, so the Deno and Bun
 * processes never load the Node server's modules.
 */
async function listen(app: H3, options: ListenOptions): Promise<Listener> {
  const runtime = currentRuntime()
  if (runtime === 'node') {
    const [{ listenNode }, { toNodeHandler }] = await Promise.all([import('./node-listener.ts'), import('h3/node')])
    return listenNode(toNodeHandler(app), options)
  }
  const { listenFetch } = await import('./fetch-listener.ts')
  return listenFetch(runtime, (request) => app.fetch(request), options)
}

/** Closes a context whose start failed. Closing may itself wait on the connection that failed: give it a moment, not forever. */
async function abandon(context: ServiceContext): Promise<void> {
  await withTimeout(context.close({ drain: false }), 2000, 'closing took too long').catch(() => undefined)
}
