import { API_KEY_HEADER, API_PREFIX } from '@mos/sdk/contract'

/** A response read to the end: status, headers and the body bytes. */
export interface HttpResponse {
  method: string
  path: string
  status: number
  headers: Headers
  bytes: Uint8Array
  text(): string
  /** The body parsed as JSON; undefined when it is not JSON. */
  json(): unknown
}

export interface RequestOptions {
  /** The API key to send: the configured key by default, `null` for none, or any string. */
  key?: string | null
  form?: FormData
  json?: unknown
  /** A raw body with its content type. */
  body?: { bytes: Uint8Array | string; contentType: string }
  headers?: Record<string, string>
  /** Wait and retry when the deployment rate-limits (default true; the rate-limit check turns it off). */
  waitOn429?: boolean
}

export interface HttpClient {
  baseUrl: string
  /** `path` is relative to the API prefix: `/tasks/abc`. */
  request(method: string, path: string, options?: RequestOptions): Promise<HttpResponse>
  get(path: string, options?: RequestOptions): Promise<HttpResponse>
  post(path: string, options?: RequestOptions): Promise<HttpResponse>
  /** Requests sent and time spent waiting for the rate limit, for the report. */
  stats: { requests: number; throttledMs: number }
}

/** A request that never got an answer (connection refused, time-out). */
export class TransportError extends Error {
  override name = 'TransportError'
}

export interface HttpOptions {
  baseUrl: string
  apiKey: string
  /** Per-request time-out. */
  timeoutMs?: number
}

const MAX_THROTTLE_WAIT_MS = 65_000

/**
 * Plain fetch, on purpose: the suite must not share code with the SDK client, so a client bug
 * cannot hide a server bug. Bodies are always read to the end so checks can inspect them.
 */
export function createHttp(options: HttpOptions): HttpClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '')
  const stats = { requests: 0, throttledMs: 0 }

  async function request(method: string, path: string, o: RequestOptions = {}): Promise<HttpResponse> {
    for (let attempt = 0; ; attempt++) {
      stats.requests++
      const response = await sendOnce(baseUrl, method, path, requestInit(o, options.apiKey), options.timeoutMs)
      if (response.status !== 429 || o.waitOn429 === false || attempt >= 3) return response
      const wait = throttleWait(response.headers)
      stats.throttledMs += wait
      await new Promise((resolve) => setTimeout(resolve, wait))
    }
  }

  return {
    baseUrl,
    stats,
    request,
    get: (path, o) => request('GET', path, o),
    post: (path, o) => request('POST', path, o),
  }
}

/** The headers and body of a request: the key (unless told otherwise) and the one body kind given. */
function requestInit(o: RequestOptions, apiKey: string): { headers: Headers; body: BodyInit | undefined } {
  const headers = new Headers(o.headers)
  const key = o.key === undefined ? apiKey : o.key
  if (key !== null) headers.set(API_KEY_HEADER, key)
  let body: BodyInit | undefined
  if (o.form) body = o.form
  else if (o.json !== undefined) {
    body = JSON.stringify(o.json)
    headers.set('content-type', 'application/json')
  } else if (o.body) {
    body = typeof o.body.bytes === 'string' ? o.body.bytes : new Blob([o.body.bytes as Uint8Array<ArrayBuffer>])
    headers.set('content-type', o.body.contentType)
  }
  return { headers, body }
}

/** One request, read to the end; no answer at all is a `TransportError`. */
async function sendOnce(
  baseUrl: string,
  method: string,
  path: string,
  init: { headers: Headers; body: BodyInit | undefined },
  timeoutMs = 60_000,
): Promise<HttpResponse> {
  let response: Response
  try {
    response = await fetch(`${baseUrl}${API_PREFIX}${path}`, { method, ...init, signal: AbortSignal.timeout(timeoutMs) })
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : ''
    throw new TransportError(
      `${method} ${API_PREFIX}${path} got no answer (${error instanceof Error ? error.message : String(error)}${cause})`,
    )
  }
  return readResponse(method, path, response)
}

/** The answer with its body read, decoded to text and JSON only when asked. */
async function readResponse(method: string, path: string, response: Response): Promise<HttpResponse> {
  const bytes = new Uint8Array(await response.arrayBuffer())
  let text: string | undefined
  const readText = () => (text ??= new TextDecoder().decode(bytes))
  return {
    method,
    path,
    status: response.status,
    headers: response.headers,
    bytes,
    text: readText,
    json() {
      try {
        return JSON.parse(readText()) as unknown
      } catch {
        return undefined
      }
    },
  }
}

/** How long to wait after a 429: Retry-After, else X-RateLimit-Reset (seconds or ms epoch), else a minute. */
function throttleWait(headers: Headers): number {
  const retryAfter = Number(headers.get('retry-after'))
  if (Number.isFinite(retryAfter) && retryAfter > 0) return Math.min(retryAfter * 1000 + 100, MAX_THROTTLE_WAIT_MS)
  const reset = Number(headers.get('x-ratelimit-reset'))
  if (Number.isFinite(reset) && reset > 0) {
    const resetMs = reset > 1e12 ? reset : reset * 1000
    return Math.min(Math.max(resetMs - Date.now() + 100, 100), MAX_THROTTLE_WAIT_MS)
  }
  return MAX_THROTTLE_WAIT_MS
}
