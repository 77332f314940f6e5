import type { FailedTask } from './contract/index.ts'
import { retryAfterMs } from './retry-after.ts'

/**
 * The SDK's error hierarchy, after openai-node and stripe-node: every error the client throws is a
 * `MosError`; HTTP answers ≥ 400 become an `APIError` subclass chosen by status, carrying the status,
 * the contract's `{"error"}` text as message, the response headers and the parsed body. Failures
 * that produced no answer (refused connection, timeout, caller abort) have no status.
 */
export class MosError extends Error {
  override name = 'MosError'
}

/** An HTTP answer with status ≥ 400. `message` is the body's `error` text when the body has one. */
export class APIError extends MosError {
  override name = 'APIError'
  /** HTTP status of the answer. */
  readonly status: number
  /** Response headers (e.g. `retry-after`, `x-ratelimit-reset`). */
  readonly headers: Headers
  /** Parsed body: `{ error }` per the contract, or whatever text the server sent. */
  readonly body: unknown

  constructor(status: number, message: string, headers: Headers, body: unknown) {
    super(message)
    this.status = status
    this.headers = headers
    this.body = body
  }
}

/** 400: unsupported format, missing or invalid field. */
export class BadRequestError extends APIError {
  override name = 'BadRequestError'
}
/** 401: `X-API-Key` missing or wrong. */
export class AuthenticationError extends APIError {
  override name = 'AuthenticationError'
}
/** 402 (variant B): a license limit was exceeded or the license has expired. */
export class PaymentRequiredError extends APIError {
  override name = 'PaymentRequiredError'
}
/** 404: unknown task, batch or route. */
export class NotFoundError extends APIError {
  override name = 'NotFoundError'
}
/** 409: e.g. download of a task that has no result yet. */
export class ConflictError extends APIError {
  override name = 'ConflictError'
}
/** 413 (variant A): the upload exceeds the plan's file-size limit. */
export class PayloadTooLargeError extends APIError {
  override name = 'PayloadTooLargeError'
}
/** 429 (variant A): too many requests per minute for this key. */
export class RateLimitError extends APIError {
  override name = 'RateLimitError'
  /** The wait the server asks for (`Retry-After`, else `X-RateLimit-Reset`), in ms from now. */
  get retryAfterMs(): number | undefined {
    return retryAfterMs(this.headers)
  }
}
/** 501 (variant B): diagnose and KTX2 encoding are reserved there. */
export class NotImplementedError extends APIError {
  override name = 'NotImplementedError'
}
/** 500 and every other 5xx except 501. */
export class InternalServerError extends APIError {
  override name = 'InternalServerError'
}

/** Common shape of the errors that carry no HTTP answer, so `error.status` is always readable. */
abstract class NoResponseError extends MosError {
  readonly status = undefined
  readonly headers: Headers = new Headers()
  readonly body = undefined
}

/** No answer: the connection was refused or dropped, DNS failed, or the body could not be read. */
export class ConnectionError extends NoResponseError {
  override name = 'ConnectionError'
  /** Low-level error code when the runtime exposes one (`ECONNREFUSED`, `ECONNRESET`, ...). */
  readonly code: string | undefined
  constructor(message: string, options?: { cause?: unknown; code?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.code = options?.code
  }
}

/** A request (per-attempt `timeout`) or a wait (`waitForTask`'s `timeoutMs`) ran out of time. */
export class TimeoutError extends NoResponseError {
  override name = 'TimeoutError'
}

/** The caller's `AbortSignal` fired; never retried. */
export class UserAbortError extends NoResponseError {
  override name = 'UserAbortError'
  constructor(message = 'request aborted by the caller', options?: { cause?: unknown }) {
    super(message, options)
  }
}

/**
 * The upload could not be made, so nothing was sent: bytes, a Blob or a stream without a file name
 * (the server reads the format from its extension), an input kind the runtime cannot upload, or a
 * path that is not a readable file (`code` is the file system's, e.g. `ENOENT`). Like the errors
 * without an answer it has no status; it is never retried (the same call would fail the same way).
 */
export class InvalidUploadError extends NoResponseError {
  override name = 'InvalidUploadError'
  /** The file system's code for a path that could not be opened (`ENOENT`, `EACCES`, `EISDIR`, ...). */
  readonly code: string | undefined
  constructor(message: string, options?: { cause?: unknown; code?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause })
    this.code = options?.code
  }
}

/**
 * A task ended in `failed`. Not an HTTP error: `waitForTask` resolves with the failed record; the
 * `...AndWait` helpers throw this, carrying the record.
 */
export class TaskFailedError extends MosError {
  override name = 'TaskFailedError'
  /** The failed task record (`error` holds the engine's reason). */
  readonly task: FailedTask
  constructor(task: FailedTask) {
    super(`task ${task.task_id} failed: ${task.error}`)
    this.task = task
  }
}

const BY_STATUS: Record<number, typeof APIError> = {
  400: BadRequestError,
  401: AuthenticationError,
  402: PaymentRequiredError,
  404: NotFoundError,
  409: ConflictError,
  413: PayloadTooLargeError,
  429: RateLimitError,
  501: NotImplementedError,
}

/**
 * Builds the error for an HTTP answer ≥ 400 from its status and body.
 * @example
 * const error = errorFromResponse(404, { error: 'task not found: x' }, new Headers())
 * error instanceof NotFoundError // true
 */
export function errorFromResponse(status: number, body: unknown, headers: Headers): APIError {
  const ErrorClass = BY_STATUS[status] ?? (status >= 500 ? InternalServerError : APIError)
  return new ErrorClass(status, describeBody(status, body), headers, body)
}

function describeBody(status: number, body: unknown): string {
  if (body && typeof body === 'object' && typeof (body as { error?: unknown }).error === 'string') {
    return (body as { error: string }).error
  }
  if (typeof body === 'string' && body.trim() !== '') return `${status}: ${body.trim().slice(0, 500)}`
  return `${status} status code (no body)`
}
