import { ERROR_TEXTS } from '@mos/sdk/contract'
import { HTTPError, type H3Event } from 'h3'
import { requestFacts } from './logging/request-log.ts'
import { DISK_FULL_TEXT, isDiskFull } from './storage/disk-full.ts'
import {
  STORAGE_FAILED_TEXT,
  STORAGE_RETRY_AFTER_SECONDS,
  STORAGE_UNAVAILABLE_TEXT,
  storageFailureOf,
} from './storage/storage-unavailable.ts'
import { errorText } from './error-text.ts'

/**
 * The one error type routes throw. Its message is the wire text of the contract; `onError` in
 * app.ts renders it as `{"error": message}` with its status and headers.
 */
export class ApiError extends HTTPError {
  /** Headers to send with the error (e.g. rate-limit headers on 429). */
  readonly extraHeaders: Record<string, string>
  constructor(status: number, message: string, headers: Record<string, string> = {}) {
    // An HTTPError subclass, so h3 treats it as handled (no stack trace logged for a 400).
    super({ status, message })
    this.extraHeaders = headers
  }
}

/** Renders any thrown value as the contract's error body. */
export function renderError(error: unknown, event: H3Event): Response {
  const { status, message, extraHeaders } = toApiError(error, event)
  // The request's log line carries what went wrong (request-log.ts), with its request id.
  if (status >= 500) {
    // A store's failure is answered in the client's terms; the log keeps the store's own words.
    requestFacts(event).error = storageFailureOf(error) ? `${message}: ${errorText(unwrapped(error))}` : message
    const stack = unhandledStack(error)
    if (stack) requestFacts(event).stack = stack
  }
  // Headers a guard staged for this request's errors (rate-limit figures): h3 does not merge them
  // into a Response returned by onError, so it happens here.
  const headers = new Headers(extraHeaders)
  for (const [name, value] of event.res.errHeaders) if (!headers.has(name)) headers.set(name, value)
  return Response.json({ error: message }, { status, headers })
}

/** The stack of an error the routes did not throw as an ApiError (h3 wraps those, keeping the original's stack). */
function unhandledStack(error: unknown): string | undefined {
  if (error instanceof ApiError || (HTTPError.isError(error) && error.cause instanceof ApiError)) return undefined
  return HTTPError.isError(error) && error.unhandled ? (error.stack ?? undefined) : error instanceof Error ? error.stack : undefined
}

/** What h3 wrapped (a thrown value no route turned into an HTTPError), else the error itself. */
function unwrapped(error: unknown): unknown {
  return HTTPError.isError(error) && error.cause !== undefined ? error.cause : error
}

function toApiError(error: unknown, event: H3Event): ApiError {
  // Whatever wrapped it: the client learns the service's state, not our paths, hosts or keys.
  if (isDiskFull(error)) return new ApiError(500, ERROR_TEXTS.internal(DISK_FULL_TEXT))
  const storageFailure = storageFailureOf(error)
  // A store away is passing (a Redis restart, S3 unreachable): the contract's 500 for a fault of the
  // service (a client written to its table knows no 503), with a wait it may heed, as HTTP's
  // Retry-After allows on any answer, and words that say to try again.
  if (storageFailure === 'unavailable')
    return new ApiError(500, ERROR_TEXTS.internal(STORAGE_UNAVAILABLE_TEXT), { 'retry-after': String(STORAGE_RETRY_AFTER_SECONDS) })
  if (storageFailure === 'failed') return new ApiError(500, ERROR_TEXTS.internal(STORAGE_FAILED_TEXT))
  const cause = HTTPError.isError(error) && error.cause instanceof ApiError ? error.cause : error
  if (cause instanceof ApiError) return cause
  if (HTTPError.isError(cause)) {
    if (cause.status === 404) return new ApiError(404, ERROR_TEXTS.routeNotFound(event.url.pathname))
    if (cause.status === 405) return new ApiError(405, ERROR_TEXTS.methodNotAllowed(event.req.method, event.url.pathname))
    if (cause.status < 500) return new ApiError(cause.status, ERROR_TEXTS.malformedBody(cause.message))
    return new ApiError(cause.status, ERROR_TEXTS.internal(errorText(cause.cause ?? cause)))
  }
  return new ApiError(500, ERROR_TEXTS.internal(errorText(error)))
}
