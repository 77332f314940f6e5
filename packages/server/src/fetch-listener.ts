import { ERROR_TEXTS } from '@mos/sdk/contract'
import type { ListenerRefusal } from './listener-answer.ts'
import type { ListenerClosed } from './node-listener.ts'
import { type Drain, inFlightRequests } from './fetch-drain.ts'
import type { RuntimeName } from './runtime.ts'
import { settlesWithin as within } from './with-timeout.ts'

/** A handler of web requests: h3's `app.fetch`. */
export type FetchHandler = (request: Request) => Response | Promise<Response>

export interface FetchListenerOptions {
  port: number
  host: string
  /** Idle connection time-out (Bun; Deno keeps its own). See the `keepAliveTimeoutMs` setting. */
  keepAliveTimeoutMs: number
  /** How long `close()` lets requests in flight finish before it cuts them (SERVICE__SERVER__SHUTDOWN_GRACE_MS). */
  shutdownGraceMs: number
  /** Told of a handler that threw past h3's own error handling (a bug): logged by the caller. */
  onHandlerError?: (error: unknown) => void
  /** Headers on every answer the listener gives itself (the drain's 503, a failed handler's 500): the app's security headers (security-headers.ts). */
  answerHeaders: Readonly<Record<string, string>>
  /** Told of each answer the listener gave where no request reached the app (Deno's drain's 503): logged by the caller. */
  onRefusal?: (refusal: ListenerRefusal) => void
}

export interface FetchListener {
  port: number
  close(): Promise<ListenerClosed>
}

/** Bun's longest idle time-out, in seconds (its `idleTimeout` is capped there). */
const BUN_MAX_IDLE_SECONDS = 255
/** How long closing waits for the handlers of the requests it cut to remove what they stored (as node-listener.ts). */
const CUT_HANDLERS_END_MS = 2_000

/**
 * Serves a fetch handler with the runtime's own HTTP server (Deno.serve, Bun.serve) through srvx,
 * h3's server layer: its package conditions pick the adapter of the runtime that loads it, and it
 * gives h3 the client's address (`request.ip`, the auth throttle's key). srvx's own habits are off:
 * no banner (main.ts writes the `listening on` line), no signal handlers (main.ts drains on SIGTERM,
 * with our grace rather than srvx's fixed countdown), no fallback port: a taken port stops start-up.
 *
 * Body limits are the service's (per route, per licence tier), so Bun's own 128 MB cap is lifted;
 * Bun's idle time-out follows the keep-alive setting (up to its 255 s maximum), above the longest
 * long poll (60 s) so a waiting client is not cut. A stalled body's 408 (uploads/request-body.ts) and
 * every answer of a drain say `Connection: close` (fetch-drain.ts): Bun closes the connection then,
 * Deno not while the body has not all arrived. A client that half-closed after its request gets no
 * answer from a handler that awaits anything: both servers drop the request on that FIN and offer
 * no setting to keep it; a head still arriving when the grace ends is closed unanswered, as neither
 * server hands over a connection before its request's head is whole (docs/deployment.md, the limits
 * of the Deno and Bun servers, with what was tried).
 */
export async function listenFetch(runtime: RuntimeName, handler: FetchHandler, options: FetchListenerOptions): Promise<FetchListener> {
  const { serve } = await import('srvx')
  const fail = (error: unknown) => {
    options.onHandlerError?.(error)
    return Response.json({ error: ERROR_TEXTS.internal('request handler failed') }, { status: 500, headers: options.answerHeaders })
  }
  const requests = inFlightRequests(handler, {
    refuseBodiesWhileDraining: runtime === 'deno',
    answerHeaders: options.answerHeaders,
    onRefusal: options.onRefusal,
  })
  // Deno's shutdown() waits for what is in flight with no bound: this signal cuts it once the grace is over.
  const cut = new AbortController()
  let server: Awaited<ReturnType<typeof serve>>
  try {
    server = serve({
      fetch: requests.fetch,
      port: options.port,
      hostname: options.host,
      silent: true,
      gracefulShutdown: false,
      error: fail,
      bun: {
        maxRequestBodySize: Number.MAX_SAFE_INTEGER,
        idleTimeout: Math.min(BUN_MAX_IDLE_SECONDS, Math.ceil(options.keepAliveTimeoutMs / 1000)),
      },
      deno: { signal: cut.signal },
    })
    await server.ready()
  } catch (error) {
    throw addressInUse(error) ? new Error(`port ${options.port} on ${options.host} is already in use`) : error
  }
  const url = server.url
  const port = url ? Number(new URL(url).port) : options.port
  if (!port) throw new Error(`the ${runtime} server did not say which port it listens on`)
  const stop = {
    graceful: () => server.close(),
    now: async () => {
      cut.abort()
      await server.close(true)
    },
  }
  return { port, close: () => drainServer(runtime, stop, requests, options.shutdownGraceMs) }
}

/**
 * Drains as node-listener.ts does on Node: the listener closes, requests in flight get `graceMs` to
 * finish (each answer with `Connection: close`), then what is left is cut (Bun's `stop(true)`, the
 * abort of Deno's server) and its handlers get a moment to remove what they stored. Bun's and Deno's
 * own graceful stop waits for requests in flight with no bound.
 *
 * Deno 2.9's `shutdown()` makes the request bodies still arriving unreadable at once (an upload in
 * flight ended `malformed request: the request body ended …`; denoland/deno#36809): on Deno the
 * listener stays open until the requests with a body begun before the drain have been answered
 * (within the grace), and a new request with a body meanwhile is refused (fetch-drain.ts).
 */
async function drainServer(
  runtime: RuntimeName,
  stop: { graceful(): Promise<void>; now(): Promise<void> },
  requests: Drain,
  graceMs: number,
): Promise<ListenerClosed> {
  const deadline = Date.now() + graceMs
  const cutNow = async () => {
    const cut = requests.count()
    await stop.now()
    await within(requests.allAnswered(), CUT_HANDLERS_END_MS)
    return { cut, refused: 0 }
  }
  requests.startDrain()
  // Deno: shutdown() only once the uploads are in; if the grace ends first it is not called at all.
  if (runtime === 'deno' && !(await within(requests.bodiesAnswered(), graceMs))) return cutNow()
  if (await within(stop.graceful(), Math.max(0, deadline - Date.now()))) return { cut: 0, refused: 0 }
  return cutNow()
}

/** Deno throws `Deno.errors.AddrInUse`, Bun an error with code EADDRINUSE. */
function addressInUse(error: unknown): boolean {
  const { name, code, message } = (error ?? {}) as { name?: string; code?: string; message?: string }
  return name === 'AddrInUse' || code === 'EADDRINUSE' || /address already in use/i.test(message ?? '')
}
