import { type $Fetch, createFetch, type FetchResponse } from 'ofetch'
import { API_KEY_HEADER, API_PREFIX, EXTENSION_HEADERS } from './contract/index.ts'
import { isServiceAddress, serviceAddressProblem, serviceRoot } from './base-url.ts'
import { ConnectionError, errorFromResponse, MosError, TimeoutError, UserAbortError } from './errors.ts'
import { isRetryable, retryDelayMs, RETRY_DEFAULTS, type RetryPolicy } from './retry.ts'
import { multipartBody, runtimeStreamsRequestBodies } from './multipart-body.ts'
import { streamedBody } from './streamed-body.ts'
import { sleep } from './wait.ts'

/** Per-call options every client method accepts as its last argument. */
export interface RequestOptions {
  /** Cancels the call (and its retries); the call then rejects with `UserAbortError`. */
  signal?: AbortSignal
  /**
   * Longest time in ms an attempt may make no progress (connecting, sending the upload, waiting for
   * the answer, reading it); overrides the client's. 0 disables it.
   */
  timeout?: number
  /** Retries after the first attempt; overrides the client's. */
  maxRetries?: number
  /** Extra request headers. */
  headers?: Record<string, string>
}

/** What the transport needs from the client options. */
export interface TransportOptions {
  baseURL: string
  apiKey?: string
  timeout: number
  maxRetries: number
  fetch?: typeof globalThis.fetch
  /** Uploads as a stream the SDK feeds; default: with the runtime's own fetch where it can send one. */
  streamUploads?: boolean
  retryPolicy?: RetryPolicy
}

type ResponseKind = 'json' | 'text' | 'bytes' | 'stream'
type ResponseOf<K extends ResponseKind> = K extends 'text'
  ? string
  : K extends 'bytes'
    ? Uint8Array
    : K extends 'stream'
      ? ReadableStream<Uint8Array>
      : unknown

/** One HTTP call of the contract, relative to `/api/v1`. */
export interface TransportRequest<K extends ResponseKind> {
  method: 'GET' | 'POST' | 'DELETE'
  path: string
  /** FormData for uploads (replayable, so a 429 can be retried), a plain object for JSON. */
  body?: FormData | Record<string, unknown>
  responseType: K
  /** Told of the successful answer's headers (e.g. what a server advertises beyond the contract). */
  onHeaders?: (headers: Headers) => void
}

/** The single place where requests are sent, retried, timed out and turned into errors. */
export interface Transport {
  request<K extends ResponseKind>(request: TransportRequest<K>, options?: RequestOptions): Promise<ResponseOf<K>>
}

/**
 * Creates the transport on ofetch. ofetch's own retry is off: its rules (POST never, no
 * `Retry-After`) are not ours, and its time-out stops at the headers.
 */
export function createTransport(options: TransportOptions): Transport {
  if (!isServiceAddress(options.baseURL)) throw new TypeError(`[mos] baseURL ${serviceAddressProblem(options.baseURL)}`)
  // Looked up per call, not captured, so a fetch patched later (msw, polyfills) is the one used.
  const fetchImpl: typeof globalThis.fetch = (input, init) => (options.fetch ?? globalThis.fetch)(input, init)
  const connection: Connection = {
    $fetch: createFetch({ fetch: fetchImpl }),
    address: serviceRoot(options.baseURL),
    baseURL: serviceRoot(options.baseURL) + API_PREFIX,
    apiKey: options.apiKey,
    timeout: options.timeout,
    // A caller's fetch gets the FormData every fetch can send, unless told it streams (docs/sdk.md).
    streamUploads: options.streamUploads ?? (!options.fetch && runtimeStreamsRequestBodies()),
  }
  const policy = options.retryPolicy ?? RETRY_DEFAULTS

  return {
    async request(request, given = {}) {
      const { call, idempotent } = withIdempotencyKey(request, given)
      const maxRetries = call.maxRetries ?? options.maxRetries
      for (let retry = 0; ; retry++) {
        try {
          return await attempt(connection, request, call)
        } catch (error) {
          if (retry >= maxRetries || !isRetryable(request.method, error, idempotent)) throw error
          const headers = (error as { headers?: Headers }).headers
          await sleep(retryDelayMs(retry, headers, policy), call.signal)
        }
      }
    },
  }
}

/** Where and how every attempt is sent. */
interface Connection {
  /** The service's address as the caller gave it, without `/api/v1`: what a connection error names. */
  address: string
  $fetch: $Fetch
  /** The server's base URL with `/api/v1`. */
  baseURL: string
  apiKey: string | undefined
  /** The client's per-attempt time limit in ms (0: none): the longest time without progress. */
  timeout: number
  /** Whether uploads go as a stream the SDK feeds (Node, Deno, Bun), so their progress resets the time limit. */
  streamUploads: boolean
}

/** How ofetch reads each kind of answer. */
const OFETCH_RESPONSE_TYPES = { json: 'json', text: 'text', bytes: 'arrayBuffer', stream: 'stream' } as const

/** One try of a request: sent, timed, its error status or failure turned into a `MosError`. */
async function attempt<K extends ResponseKind>(
  connection: Connection,
  request: TransportRequest<K>,
  call: RequestOptions,
): Promise<ResponseOf<K>> {
  const signal = call.signal
  if (signal?.aborted) throw new UserAbortError(undefined, { cause: signal.reason })
  const timeout = call.timeout ?? connection.timeout
  const limit = attemptSignal(signal, timeout)
  try {
    let response: FetchResponse<unknown>
    try {
      response = await send(connection, request, call.headers, limit)
    } catch (error) {
      throw noResponseError(error, connection.address, signal, limit.timedOut(), timeout)
    }
    if (response.status >= 400) {
      throw errorFromResponse(response.status, await readErrorBody(response._data), response.headers)
    }
    request.onHeaders?.(response.headers)
    if (request.responseType === 'stream') {
      // The time limit covers the wait for the answer; the body is read at the caller's pace, and
      // takes over the caller's signal and a limit on each wait for data (streamed-body.ts).
      return streamedBody(bodyStream(response._data), {
        signal,
        idleTimeout: timeout,
        abortFetch: limit.abort,
        readError: (error) => noResponseError(error, connection.address, undefined, false, timeout),
      }) as ResponseOf<K>
    }
    return responseValue(request.responseType, response._data)
  } catch (error) {
    if (error instanceof MosError) throw error
    // Body read failures land here (the headers had arrived).
    throw noResponseError(error, connection.address, signal, limit.timedOut(), timeout)
  } finally {
    limit.stopTimer()
    limit.detach()
  }
}

/**
 * The caller's signal and the attempt's time limit, joined into the one signal the fetch gets. The
 * limit is an idle clock, as the service's own bound on a request body is: `progress` (each chunk
 * of an upload handed to the runtime) starts it again, so an upload that moves is never cut.
 */
function attemptSignal(signal: AbortSignal | undefined, timeout: number) {
  const controller = new AbortController()
  const forwardAbort = () => controller.abort(signal?.reason)
  signal?.addEventListener('abort', forwardAbort, { once: true })
  let timedOut = false
  let stopped = false
  let timer: ReturnType<typeof setTimeout> | undefined
  const startTimer = () => {
    clearTimeout(timer)
    if (timeout <= 0 || stopped) return
    timer = setTimeout(() => {
      timedOut = true
      controller.abort()
    }, timeout)
  }
  startTimer()
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    progress: startTimer,
    stopTimer: () => {
      stopped = true
      clearTimeout(timer)
    },
    /** Stops forwarding the caller's abort (a streamed body listens to it itself). */
    detach: () => signal?.removeEventListener('abort', forwardAbort),
    /** Stops the fetch, e.g. the connection under a streamed body the caller gave up. */
    abort: () => controller.abort(),
  }
}

/** Sends the request once; an error status is an answer here, not a throw. */
function send(
  connection: Connection,
  request: TransportRequest<ResponseKind>,
  extraHeaders: Record<string, string> | undefined,
  limit: Pick<ReturnType<typeof attemptSignal>, 'signal' | 'progress'>,
): Promise<FetchResponse<unknown>> {
  const headers: Record<string, string> = {
    accept: request.responseType === 'json' ? 'application/json' : '*/*',
    ...extraHeaders,
    ...(connection.apiKey ? { [API_KEY_HEADER]: connection.apiKey } : {}),
  }
  let body = request.body as BodyInit | Record<string, unknown> | undefined
  if (request.body instanceof FormData && connection.streamUploads) {
    // Sent as a stream of known length (ofetch adds `duplex: 'half'`), each chunk restarting the
    // time limit; a browser sends the FormData itself, timed as a whole (docs/sdk.md).
    const form = multipartBody(request.body)
    headers['content-type'] = form.contentType
    headers['content-length'] = String(form.length)
    body = form.open(limit.progress, limit.signal)
  }
  return connection.$fetch.raw(request.path, {
    baseURL: connection.baseURL,
    method: request.method,
    body,
    headers,
    signal: limit.signal,
    responseType: OFETCH_RESPONSE_TYPES[request.responseType],
    retry: false,
    ignoreResponseError: true,
  })
}

/**
 * A submit (a multipart POST) carries an Idempotency-Key, random per call and the same on each of
 * the call's retries: a retry after a lost answer then returns the first task instead of making a
 * second one (a Mos extension). A key the caller set wins. Such a call may be retried as a GET is.
 */
function withIdempotencyKey(request: TransportRequest<ResponseKind>, call: RequestOptions): { call: RequestOptions; idempotent: boolean } {
  if (request.method === 'GET') return { call, idempotent: true }
  const header = EXTENSION_HEADERS.idempotencyKey.toLowerCase()
  if (Object.keys(call.headers ?? {}).some((name) => name.toLowerCase() === header)) return { call, idempotent: true }
  if (!(request.body instanceof FormData)) return { call, idempotent: false }
  return {
    call: { ...call, headers: { ...call.headers, [EXTENSION_HEADERS.idempotencyKey]: globalThis.crypto.randomUUID() } },
    idempotent: true,
  }
}

/** The answer's body as the kind asked for (an empty body is empty bytes). */
function responseValue<K extends ResponseKind>(kind: K, data: unknown): ResponseOf<K> {
  if (kind === 'bytes') return new Uint8Array((data as ArrayBuffer | undefined) ?? new ArrayBuffer(0)) as ResponseOf<K>
  return data as ResponseOf<K>
}

/** A streamed answer's body (an empty body is an empty stream). */
function bodyStream(data: unknown): ReadableStream<Uint8Array> {
  return (data as ReadableStream<Uint8Array> | undefined) ?? new ReadableStream({ start: (controller) => controller.close() })
}

/** System codes a user meets when a service is away, said in words (the code follows in brackets). */
const CONNECTION_FAILURES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host lookup failed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
}

function noResponseError(error: unknown, address: string, signal: AbortSignal | undefined, timedOut: boolean, timeout: number): MosError {
  if (error instanceof MosError) return error
  if (signal?.aborted) return new UserAbortError(undefined, { cause: error })
  if (timedOut) return new TimeoutError(`request timed out: no progress for ${timeout} ms`, { cause: error })
  const root = rootCause(error)
  const code = errorCode(error)
  const detail = (code && CONNECTION_FAILURES[code]) ?? (root instanceof Error ? root.message : String(root))
  return new ConnectionError(`connection to ${address} failed: ${detail}${code ? ` (${code})` : ''}`, { cause: error, code })
}

function rootCause(error: unknown): unknown {
  let current = error
  while (current instanceof Error && current.cause !== undefined) current = current.cause
  return current
}

/** Finds a system error code (`ECONNREFUSED`...) anywhere in the cause chain, including AggregateErrors. */
function errorCode(error: unknown, depth = 0): string | undefined {
  if (!error || typeof error !== 'object' || depth > 8) return undefined
  const code = (error as { code?: unknown }).code
  if (typeof code === 'string' && code.startsWith('E')) return code
  const nested = (error as { errors?: unknown[] }).errors
  for (const inner of Array.isArray(nested) ? nested : []) {
    const found = errorCode(inner, depth + 1)
    if (found) return found
  }
  return errorCode((error as { cause?: unknown }).cause, depth + 1)
}

async function readErrorBody(data: unknown): Promise<unknown> {
  let text: string | undefined
  if (typeof data === 'string') text = data
  else if (data instanceof ArrayBuffer || data instanceof Uint8Array) text = new TextDecoder().decode(data)
  else if (data instanceof ReadableStream) text = await new Response(data).text().catch(() => '')
  else return data
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}
