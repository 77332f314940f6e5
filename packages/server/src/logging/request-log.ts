import type { H3Event } from 'h3'
import { sha256Hex } from '../web-crypto.ts'
import type { Logger } from './create-logger.ts'
import { listenerAnswerOn } from '../listener-answer.ts'
import { API_KEY_HEADER } from '@mos/sdk/contract'

const REQUEST_ID_HEADER = 'x-request-id'

/**
 * A caller's request id is kept when it is short and plain (what tracing headers and UUIDs use);
 * anything else is replaced, so a log line or a response header can never carry what a client
 * smuggled in (newlines, control characters, megabytes).
 */
const ACCEPTED_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/

/** What the log line of one request says; routes add the task or batch they made. */
export interface RequestFacts {
  requestId: string
  startedAt: number
  taskId?: string
  batchId?: string
  /** The API key's fingerprint, when the request carried a key. */
  keyHash?: string
  /** The error text of a 5xx answer. */
  error?: string
  /** The stack of an error no route turned into a contract error (a bug, or a store away): what to debug it by. */
  stack?: string
  /** A 5xx that states how the deployment is set up (sign-in with no password set), not a fault: logged as a warning. */
  setupState?: boolean
}

const FACTS_KEY = 'mosRequest'

/** The request id sent by the client when acceptable, else a new one. */
function acceptedRequestId(sent: string | null | undefined): string {
  return sent && ACCEPTED_REQUEST_ID.test(sent) ? sent : crypto.randomUUID()
}

/** A short, stable fingerprint of an API key: lines of one key can be told apart, the key never appears. */
async function keyFingerprint(key: string): Promise<string> {
  return (await sha256Hex(key)).slice(0, 12)
}

/**
 * This request's facts (id, start, task made). Outside an app with the request log (a bare test
 * event) they are created on first use, so a route never has to check.
 */
export function requestFacts(event: H3Event): RequestFacts {
  const existing = event.context[FACTS_KEY] as RequestFacts | undefined
  if (existing) return existing
  const facts: RequestFacts = { requestId: acceptedRequestId(event.req.headers.get(REQUEST_ID_HEADER)), startedAt: performance.now() }
  event.context[FACTS_KEY] = facts
  return facts
}

export interface RequestLogOptions {
  logger: Logger
  /** Paths logged at debug instead of info (probes polled every few seconds would drown the rest). */
  quietPaths?: readonly string[]
}

/**
 * The h3 hooks that give every request an id (echoed as `X-Request-Id` on every response, errors
 * included) and one log line when its response is ready: id, method, route, status, duration,
 * the key's fingerprint and the task it made.
 */
export function createRequestLog(options: RequestLogOptions) {
  const quiet = new Set(options.quietPaths ?? [])
  return {
    async onRequest(event: H3Event): Promise<void> {
      const facts = requestFacts(event)
      // Here, as Web Crypto's digest is asynchronous and the response hook is not.
      const key = event.req.headers.get(API_KEY_HEADER)
      if (key) facts.keyHash = await keyFingerprint(key)
    },
    onResponse(response: Response, event: H3Event): void {
      const facts = requestFacts(event)
      try {
        response.headers.set(REQUEST_ID_HEADER, facts.requestId)
      } catch {
        // A response with immutable headers (none of ours today): the line below still carries the id.
      }
      // The listener may have answered in the handler's place (the shutdown grace's 503): the line
      // states what the client got, and the handler's own status beside it.
      const listener = listenerAnswerOn(event.runtime?.node?.res)
      const fields = {
        requestId: facts.requestId,
        method: event.req.method,
        route: event.context.matchedRoute?.route ?? event.url.pathname,
        path: event.url.pathname,
        status: listener?.status ?? response.status,
        ...(listener ? { answeredBy: listener.answeredBy, handlerStatus: response.status } : {}),
        durationMs: Math.round((performance.now() - facts.startedAt) * 10) / 10,
        ...(facts.keyHash ? { keyHash: facts.keyHash } : {}),
        ...(facts.taskId ? { taskId: facts.taskId } : {}),
        ...(facts.batchId ? { batchId: facts.batchId } : {}),
        ...(listener ? { error: listener.error } : facts.error ? { error: facts.error } : {}),
        ...(facts.stack ? { stack: facts.stack } : {}),
      }
      // The listener's answer at the end of a drain the operator asked for: a warning, not a fault of the service.
      // A probe's 503 is the answer it exists to give: a warning, not a fault.
      // 501 is the deployment saying what it does not offer, not a fault of the service.
      if (listener) options.logger.warn(fields, 'request')
      else if (quiet.has(event.url.pathname)) options.logger[response.status >= 500 ? 'warn' : 'debug'](fields, 'request')
      else if (response.status >= 500 && facts.setupState) options.logger.warn(fields, 'request')
      else if (response.status >= 500 && response.status !== 501) options.logger.error(fields, 'request')
      else options.logger.info(fields, 'request')
    },
  }
}
