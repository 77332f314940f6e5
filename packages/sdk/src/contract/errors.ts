/**
 * The wire texts of section 7. Every error body is `{"error": text}`; these builders are the only
 * place the wording lives, so the server, the SDK and the conformance suite cannot drift apart.
 */
export interface ErrorBody {
  error: string
}

export const ERROR_TEXTS = {
  /** 400: the uploaded file's extension (or a requested format) is not one the operation takes. */
  unsupportedFormat: (extension: string) => `unsupported format: ${extension}`,
  /** 400: a required form part or JSON field is absent or empty. */
  missingField: (field: string) => `missing required field: ${field}`,
  /** 400: a field is present but breaks its rule; `rule` says what is accepted. */
  invalidField: (field: string, rule: string) => `invalid value for ${field}: ${rule}`,
  /** 400: the body could not be parsed at all (not multipart, not JSON). */
  malformedBody: (detail: string) => `malformed request: ${detail}`,
  /** 401 */
  unauthorized: () => 'unauthorized: missing or invalid X-API-Key header',
  /** 413 in variant A, 402 in variant B. */
  fileTooLarge: (sizeMb: number, limitMb: number) => `file size ${sizeMb}MB exceeds limit of ${limitMb}MB for current license tier`,
  /**
   * 413 in variant A, 402 in variant B: a file of unknown length (a chunked body) that went on past
   * what the service reads of an oversized upload; `overMb` is what it read, so a lower bound.
   */
  fileTooLargeOver: (overMb: number, limitMb: number) =>
    `file size over ${overMb}MB exceeds limit of ${limitMb}MB for current license tier`,
  /** 413 in variant A, 402 in variant B: more files in one batch than the tier allows. */
  batchTooLarge: (limit: number) => `batch exceeds limit of ${limit} files for current license tier`,
  /** 413 in variant A, 402 in variant B: a texture input over the tier's texture limit. */
  textureTooLarge: (sizeMb: number, limitMb: number) => `texture size ${sizeMb}MB exceeds limit of ${limitMb}MB for current license tier`,
  /** 413 in both variants: a request body over the service's own bound (a batch's total, a JSON body). */
  requestTooLarge: (bytes: number, limitBytes: number) => `request body of ${bytes} bytes exceeds limit of ${limitBytes} bytes`,
  /** 402 in both variants: the unlicensed trial has processed all the files it allows. */
  trialExhausted: (maxFiles: number) => `trial limit reached: ${maxFiles} files processed; a license key is required to continue`,
  /** 402 in both variants: the licence expired, trial limits apply again and they are used up. */
  licenseExpiredTrialExhausted: (expiredAt: string, maxFiles: number) =>
    `license expired at ${expiredAt}; trial limits apply and all ${maxFiles} trial files are used`,
  /** 402 in variant B (license verify): the key was refused; `reason` says why. */
  licenseRefused: (reason: string) => `license key refused: ${reason}`,
  /** 429, variant A. */
  rateLimited: (perMinute: number) => `rate limit exceeded: max ${perMinute} requests per minute per API key`,
  /** 429, both variants: too many wrong or missing keys from one client address. */
  authThrottled: (perMinute: number) => `too many failed authentication attempts: max ${perMinute} per minute per client address`,
  /** 404 */
  taskNotFound: (id: string) => `task not found: ${id}`,
  batchNotFound: (id: string) => `batch not found: ${id}`,
  /** 404: the task exists but its result was removed (retention). */
  resultGone: (id: string) => `result of task ${id} is no longer available`,
  routeNotFound: (path: string) => `not found: ${path}`,
  /** 405 */
  methodNotAllowed: (method: string, path: string) => `method not allowed: ${method} ${path}`,
  /** 409: download of a task that has no result (yet). */
  taskNotCompleted: (id: string, status: string) => `task ${id} is ${status}: no result to download`,
  /** 501, variant B. */
  notImplemented: (what: string) => `not implemented: ${what} is not available in this deployment`,
  /** Error of a task that ran longer than the time-out (task record, not an HTTP error). */
  taskTimeout: (seconds: number) => `timeout: the task ran longer than the limit of ${seconds} seconds`,
  /** 500 */
  internal: (message: string) => `internal error: ${message}`,
} as const

/** HTTP status per error kind that differs between the variants. */
export const LIMIT_EXCEEDED_STATUS = { A: 413, B: 402 } as const

/** Status of the trial and licence-expiry refusals: 402 in both variants (documented decision). */
export const LICENSE_REQUIRED_STATUS = 402

/** Headers of the per-key rate limit (variant A, 2.8): on every keyed response, plus Retry-After on 429. */
export const RATE_LIMIT_HEADERS = {
  limit: 'X-RateLimit-Limit',
  remaining: 'X-RateLimit-Remaining',
  reset: 'X-RateLimit-Reset',
  retryAfter: 'Retry-After',
} as const
