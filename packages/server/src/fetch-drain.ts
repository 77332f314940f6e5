import { EXTENSION_ERROR_TEXTS, STOPPING_RETRY_AFTER_SECONDS } from '@mos/sdk/contract'
import type { FetchHandler } from './fetch-listener.ts'
import type { ListenerRefusal } from './listener-answer.ts'

/** The requests a fetch listener (Deno, Bun) has in flight, and what its drain does to new ones. */
export interface Drain {
  /** The handler to serve: the app's, counted, with the connection policy below on its answers. */
  fetch: FetchHandler
  /** From now on every answer says `Connection: close` (and on Deno, a new body is refused). */
  startDrain(): void
  /** Requests whose answer is not given yet. */
  count(): number
  /** Settles once the requests with a body that are in flight now have been answered. */
  bodiesAnswered(): Promise<void>
  /** Settles once every request in flight now has been answered. */
  allAnswered(): Promise<void>
}

/**
 * Counts the requests in flight, from the handler's call to its answer, and sets how connections
 * end, as node-listener.ts does on Node:
 *
 * - A 408 (a body that stalled, uploads/request-body.ts) says `Connection: close` (RFC 9110 15.5.9:
 *   408 means the server closes the connection). Bun then closes it, where it kept it to its idle
 *   time-out. Deno sends the header but keeps a connection whose body has not all arrived until the
 *   client closes it, cancelled or not: no answer can make it close (docs/deployment.md).
 * - Once the drain began, every answer says `Connection: close`: the client does not send its next
 *   request on a connection about to go away.
 * - `refuseBodiesWhileDraining` (Deno): a request with a body that arrives during the drain is
 *   answered at once, 503 with `Retry-After` (as Node answers a request still arriving when its grace ends, node-shutdown-refusal.ts), as the listener still takes connections
 *   while the uploads begun before it finish (fetch-listener.ts); its body, which Deno's shutdown
 *   would cut, is never read. Requests without one (probes, reads) are served.
 */
export function inFlightRequests(
  handler: FetchHandler,
  options: {
    refuseBodiesWhileDraining: boolean
    answerHeaders: Readonly<Record<string, string>>
    /** Told of each request refused here, which never reaches the app (and its request log). */
    onRefusal?: (refusal: ListenerRefusal) => void
  },
): Drain {
  const running = new Map<Promise<Response>, { body: boolean }>()
  let draining = false
  const answered = (withBody: boolean) =>
    Promise.allSettled([...running].filter(([, request]) => request.body || !withBody).map(([answer]) => answer)).then(() => undefined)
  return {
    async fetch(request) {
      if (draining && options.refuseBodiesWhileDraining && request.body !== null) {
        options.onRefusal?.({
          status: 503,
          error: EXTENSION_ERROR_TEXTS.processStopping(),
          answeredBy: 'drain',
          method: request.method,
          path: new URL(request.url).pathname,
        })
        return stoppingRefusal(options.answerHeaders)
      }
      const answer = Promise.resolve().then(() => handler(request))
      running.set(answer, { body: request.body !== null })
      try {
        const response = await answer
        return draining || response.status === 408 ? closingConnection(response) : response
      } finally {
        running.delete(answer)
      }
    },
    startDrain: () => {
      draining = true
    },
    count: () => running.size,
    bodiesAnswered: () => answered(true),
    allAnswered: () => answered(false),
  }
}

/** The answer with `Connection: close` (a copy: a response's headers may be immutable). */
function closingConnection(response: Response): Response {
  const headers = new Headers(response.headers)
  headers.set('connection', 'close')
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers })
}

function stoppingRefusal(answerHeaders: Readonly<Record<string, string>>): Response {
  return Response.json(
    { error: EXTENSION_ERROR_TEXTS.processStopping() },
    { status: 503, headers: { ...answerHeaders, connection: 'close', 'retry-after': String(STOPPING_RETRY_AFTER_SECONDS) } },
  )
}
