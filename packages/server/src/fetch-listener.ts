import type { RuntimeName } from './runtime.ts'

/** A handler of web requests: h3's `app.fetch`. */
export type FetchHandler = (request: Request) => Response | Promise<Response>

export interface FetchListenerOptions {
  port: number
  host: string
  /** Idle connection time-out (Bun; Deno keeps its own). See the `keepAliveTimeoutMs` setting. */
  keepAliveTimeoutMs: number
  /** Told of a handler that threw past h3's own error handling (a bug): logged by the caller. */
  onHandlerError?: (error: unknown) => void
}

export interface FetchListener {
  port: number
  close(): Promise<void>
}

/** Bun's longest idle time-out, in seconds (its `idleTimeout` is capped there). */
const BUN_MAX_IDLE_SECONDS = 255

/**
 * Serves a fetch handler with the runtime's own HTTP server (Deno.serve, Bun.serve) through srvx,
 * h3's server layer: its package conditions pick the adapter of the runtime that loads it, and it
 * gives h3 the client's address (`request.ip`, the auth throttle's key). srvx's own habits are off:
 * no banner (main.ts writes the `listening on` line), no signal handlers (main.ts drains tasks on
 * SIGTERM), no fallback port: a taken port stops start-up.
 *
 * Body limits are the service's (per route, per licence tier), so Bun's own 128 MB cap is lifted;
 * Bun's idle time-out follows the keep-alive setting (up to its 255 s maximum), above the longest
 * long poll (60 s) so a waiting client is not cut. A stalled body gets the app's 408
 * (uploads/request-body.ts), but neither server lets us close its connection then, nor answer a
 * client that half-closed after its request (both drop the request on that FIN): docs/deployment.md.
 */
export async function listenFetch(runtime: RuntimeName, handler: FetchHandler, options: FetchListenerOptions): Promise<FetchListener> {
  const { serve } = await import('srvx')
  const fail = (error: unknown) => {
    options.onHandlerError?.(error)
    return Response.json({ error: 'internal error: request handler failed' }, { status: 500 })
  }
  let server: Awaited<ReturnType<typeof serve>>
  try {
    server = serve({
      fetch: handler,
      port: options.port,
      hostname: options.host,
      silent: true,
      gracefulShutdown: false,
      error: fail,
      bun: {
        maxRequestBodySize: Number.MAX_SAFE_INTEGER,
        idleTimeout: Math.min(BUN_MAX_IDLE_SECONDS, Math.ceil(options.keepAliveTimeoutMs / 1000)),
      },
    })
    await server.ready()
  } catch (error) {
    throw addressInUse(error) ? new Error(`port ${options.port} on ${options.host} is already in use`) : error
  }
  const url = server.url
  const port = url ? Number(new URL(url).port) : options.port
  if (!port) throw new Error(`the ${runtime} server did not say which port it listens on`)
  return {
    port,
    // Requests in flight finish first (Deno's shutdown and Bun's stop both wait for them).
    close: () => server.close(),
  }
}

/** Deno throws `Deno.errors.AddrInUse`, Bun an error with code EADDRINUSE. */
function addressInUse(error: unknown): boolean {
  const { name, code, message } = (error ?? {}) as { name?: string; code?: string; message?: string }
  return name === 'AddrInUse' || code === 'EADDRINUSE' || /address already in use/i.test(message ?? '')
}
