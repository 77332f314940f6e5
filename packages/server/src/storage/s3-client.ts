import { md5 } from '@noble/hashes/legacy.js'
import { AwsClient } from 'aws4fetch'
import { ConfigError } from '../config/load.ts'
import { toBase64 } from '../web-crypto.ts'

export interface S3ClientOptions {
  /** S3-compatible endpoint; empty for AWS S3 itself. */
  endpoint: string
  bucket: string
  region: string
  accessKeyId: string
  secretAccessKey: string
  sessionToken?: string
  /** Bytes per part of a multipart upload (S3's minimum is 5 MiB); a smaller body goes in one PUT. */
  partBytes?: number
  /** Parts in flight per upload: at most `partBytes × (queueSize + 1)` of an upload is in memory. */
  queueSize?: number
  /** How often a request answered 5xx / 429 or refused by the network is sent again (with backoff). */
  retries?: number
  /** Keys per listing page (S3's maximum is 1000). */
  pageSize?: number
  /** The fetch to send signed requests with (tests count requests through it). */
  fetch?: (request: Request) => Promise<Response>
}

/** First back-off after a failed attempt; doubled each time, with full jitter. */
const RETRY_BASE_MS = 100

export const S3_CLIENT_DEFAULTS = { partBytes: 8 * 1024 * 1024, queueSize: 2, retries: 3, pageSize: 1000 } as const

export interface S3Object {
  key: string
  size: number
  modifiedAt: number
  /** S3's entity tag, quotes removed (a multipart object's ends in `-<parts>`). */
  etag: string
}

export interface S3MultipartUpload {
  key: string
  uploadId: string
  initiatedAt: number
}

/**
 * The one S3 client of a process: SigV4 over fetch (aws4fetch), shared by the records driver and
 * the file store. Keys are bucket keys; callers add their own folders.
 */
export interface S3Client {
  /** The object's body as a web stream, or undefined when absent. */
  get(key: string): Promise<ReadableStream<Uint8Array> | undefined>
  /** Writes `body` whole; a stream longer than one part goes up as a multipart upload. Resolves to the byte count. */
  put(key: string, body: Uint8Array | string | ReadableStream<Uint8Array>): Promise<number>
  /** Size and change time, or undefined when absent. */
  head(key: string): Promise<S3Object | undefined>
  /** Removes the keys (in batches of S3's maximum of 1000); absent keys are no error. */
  delete(keys: string[]): Promise<void>
  /** Every object under `prefix`, page after page. */
  list(prefix: string): AsyncGenerator<S3Object>
  /** Unfinished multipart uploads under `prefix`; empty where the server lacks the call. */
  listUploads(prefix: string): Promise<S3MultipartUpload[]>
  abortUpload(upload: S3MultipartUpload): Promise<void>
}

/**
 * The settings' credentials, or a start-up error naming what is missing. The configuration has
 * already taken empty keys from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN; the
 * AWS SDK's other sources (profile files, instance roles) are not read (docs/configuration.md).
 */
export function s3Credentials(settings: { accessKeyId: string; secretAccessKey: string; sessionToken: string }): {
  accessKeyId: string
  secretAccessKey: string
  sessionToken?: string
} {
  if (!settings.accessKeyId || !settings.secretAccessKey) {
    throw new ConfigError(
      'S3 storage needs SERVICE__STORAGE__S3__ACCESS_KEY_ID and SERVICE__STORAGE__S3__SECRET_ACCESS_KEY, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment',
    )
  }
  const { accessKeyId, secretAccessKey, sessionToken } = settings
  return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) }
}

/**
 * An S3 error naming the operation, the key and the answer (status 0: no answer, `code` then says
 * why), prefixed as unstorage prefixes its drivers'.
 */
export class S3Error extends Error {
  override name = 'S3Error'
  constructor(
    readonly operation: string,
    readonly key: string,
    readonly status: number,
    readonly code: string,
    options?: ErrorOptions,
  ) {
    super(`[mos] [s3] ${operation} ${key}: ${status ? `${status}${code ? ` ${code}` : ''}` : code}`, options)
  }
}

/** Keys as S3 expects them in a path: each segment percent-encoded, slashes kept. */
const encodeKey = (key: string) => key.split('/').map(encodeURIComponent).join('/')

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }
const unescapeXml = (text: string) =>
  text.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (whole, name: string) =>
    name.startsWith('#x') || name.startsWith('#X')
      ? String.fromCodePoint(Number.parseInt(name.slice(2), 16))
      : name.startsWith('#')
        ? String.fromCodePoint(Number(name.slice(1)))
        : (XML_ENTITIES[name] ?? whole),
  )
const unquote = (etag: string) => etag.replace(/^"|"$/g, '')
const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/** The text of each `<tag>` in `xml` (S3's answers are flat enough for this; no XML library needed). */
const tags = (xml: string, tag: string) => [...xml.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g'))].map((m) => m[1] ?? '')
const tag = (xml: string, name: string) => {
  const found = tags(xml, name)[0]
  return found === undefined ? undefined : unescapeXml(found)
}

/** Creates the S3 client for a bucket: path-style addressing on an endpoint (every S3-compatible server has it). */
export function createS3Client(options: S3ClientOptions): S3Client {
  const partBytes = options.partBytes ?? S3_CLIENT_DEFAULTS.partBytes
  const queueSize = options.queueSize ?? S3_CLIENT_DEFAULTS.queueSize
  const retries = options.retries ?? S3_CLIENT_DEFAULTS.retries
  const pageSize = options.pageSize ?? S3_CLIENT_DEFAULTS.pageSize
  const aws = new AwsClient({
    accessKeyId: options.accessKeyId,
    secretAccessKey: options.secretAccessKey,
    // An empty token is none (aws4fetch would sign an empty security-token header).
    ...(options.sessionToken ? { sessionToken: options.sessionToken } : {}),
    service: 's3',
    region: options.region,
  })
  const fetchSigned = options.fetch ?? ((request: Request) => fetch(request))
  const bucketUrl = options.endpoint
    ? `${options.endpoint.replace(/\/+$/, '')}/${options.bucket}`
    : `https://${options.bucket}.s3.${options.region}.amazonaws.com`
  const urlOf = (key: string, query = '') => `${bucketUrl}/${encodeKey(key)}${query ? `?${query}` : ''}`

  /** One signed request; throws `S3Error` for any answer but 2xx (and 404 when `missingOk`). */
  async function send(operation: string, key: string, url: string, init: RequestInit, missingOk = false): Promise<Response | undefined> {
    let response: Response
    try {
      response = await withRetries(url, init)
    } catch (error) {
      const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : ''
      throw new S3Error(operation, key, 0, `${error instanceof Error ? error.message : String(error)}${cause}`, { cause: error })
    }
    if (response.ok) return response
    const body = await response.text().catch(() => '')
    if (missingOk && response.status === 404) return undefined
    throw new S3Error(operation, key, response.status, tag(body, 'Code') ?? '')
  }

  /** Signs and sends, again with backoff after a 5xx, a 429 or a network failure (bodies are bytes, so resendable). */
  async function withRetries(url: string, init: RequestInit): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      // Signed anew each time: a signature is only valid for a few minutes.
      const request = await aws.sign(url, init)
      try {
        const response = await fetchSigned(request)
        if ((response.status < 500 && response.status !== 429) || attempt >= retries) return response
        await response.body?.cancel()
      } catch (error) {
        if (attempt >= retries) throw error
      }
      await new Promise((resolve) => setTimeout(resolve, Math.random() * RETRY_BASE_MS * 2 ** attempt))
    }
  }

  async function putWhole(key: string, body: Uint8Array | string): Promise<void> {
    // Bodies are plain bytes; the cast only narrows TypeScript's ArrayBufferLike (never a SharedArrayBuffer here).
    await send('put', key, urlOf(key), { method: 'PUT', body: body as string | Uint8Array<ArrayBuffer> })
  }

  /**
   * The stream in parts of `partBytes` (the last one shorter, none empty): the first two decide
   * between one PUT (the stream ended within a part) and a multipart upload, so small files cost
   * one request.
   */
  async function putStream(key: string, source: ReadableStream<Uint8Array>): Promise<number> {
    let bytes = 0
    const parts = partsOf(source, partBytes, (length) => (bytes += length))
    const first = await parts.next()
    const second = first.done ? first : await parts.next()
    if (second.done) {
      await putWhole(key, first.done ? new Uint8Array(0) : first.value)
      return bytes
    }
    try {
      await putMultipart(
        key,
        (async function* () {
          yield first.value as Uint8Array
          yield second.value
          yield* parts
        })(),
      )
    } finally {
      // Ends the read of `source` (cancelling it) when the upload stopped before its end.
      await parts.return(undefined)
    }
    return bytes
  }

  /** Sends `parts` as one multipart upload; on any failure aborts it: no half object, and no parts left to pay for. */
  async function putMultipart(key: string, parts: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<void> {
    const upload = await startMultipart(key)
    try {
      for await (const part of parts) await upload.add(part)
      await upload.complete()
    } catch (error) {
      await upload.abort().catch(() => undefined)
      throw error
    }
  }

  /** The multipart upload's DELETE: removes its parts (an absent upload is no error). */
  const abortMultipart = (key: string, uploadId: string) =>
    send('abort multipart upload', key, urlOf(key, `uploadId=${encodeURIComponent(uploadId)}`), { method: 'DELETE' }, true)

  interface Multipart {
    add(part: Uint8Array): Promise<void>
    complete(): Promise<void>
    abort(): Promise<void>
  }

  async function startMultipart(key: string): Promise<Multipart> {
    const created = await send('create multipart upload', key, urlOf(key, 'uploads'), { method: 'POST' })
    const uploadId = tag(await created!.text(), 'UploadId')
    if (!uploadId) throw new S3Error('create multipart upload', key, created!.status, 'no UploadId in the answer')
    const etags: string[] = []
    const inFlight = new Set<Promise<void>>()
    let failure: unknown
    const query = (extra = '') => `uploadId=${encodeURIComponent(uploadId)}${extra}`
    return {
      async add(part) {
        if (failure) throw failure
        const number = etags.length + 1
        etags.push('')
        const sent: Promise<void> = send('upload part', key, urlOf(key, query(`&partNumber=${number}`)), {
          method: 'PUT',
          body: part as Uint8Array<ArrayBuffer>,
        })
          .then((response) => {
            etags[number - 1] = response!.headers.get('etag') ?? ''
          })
          .catch((error: unknown) => {
            failure ??= error
          })
          .finally(() => inFlight.delete(sent))
        inFlight.add(sent)
        // Back-pressure: the stream is read on only while fewer than `queueSize` parts are on their way.
        while (inFlight.size >= queueSize) await Promise.race(inFlight)
        if (failure) throw failure
      },
      async complete() {
        await Promise.all(inFlight)
        if (failure) throw failure
        const body = `<CompleteMultipartUpload>${etags.map((etag, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${escapeXml(etag)}</ETag></Part>`).join('')}</CompleteMultipartUpload>`
        const response = await send('complete multipart upload', key, urlOf(key, query()), { method: 'POST', body })
        // S3 may answer 200 with an error document when completion fails late.
        const text = await response!.text()
        if (text.includes('<Error>')) throw new S3Error('complete multipart upload', key, response!.status, tag(text, 'Code') ?? '')
      },
      async abort() {
        await Promise.allSettled(inFlight)
        await abortMultipart(key, uploadId)
      },
    }
  }

  return {
    async get(key) {
      const response = await send('get', key, urlOf(key), { method: 'GET' }, true)
      return response?.body ?? (response ? new Blob([]).stream() : undefined)
    },
    async put(key, body) {
      if (typeof body === 'string') {
        const bytes = new TextEncoder().encode(body)
        await putWhole(key, bytes)
        return bytes.byteLength
      }
      if (body instanceof Uint8Array) {
        // Bytes already in memory go in parts too (views, no copies), as a stream would.
        if (body.byteLength > partBytes) await putMultipart(key, viewsOf(body, partBytes))
        else await putWhole(key, body)
        return body.byteLength
      }
      return putStream(key, body)
    },
    async head(key) {
      const response = await send('head', key, urlOf(key), { method: 'HEAD' }, true)
      if (!response) return undefined
      const modified = response.headers.get('last-modified')
      return {
        key,
        size: Number(response.headers.get('content-length') ?? 0),
        modifiedAt: modified ? Date.parse(modified) : 0,
        etag: unquote(response.headers.get('etag') ?? ''),
      }
    },
    async delete(keys) {
      for (let i = 0; i < keys.length; i += 1000) {
        const batch = keys.slice(i, i + 1000)
        const body = `<Delete><Quiet>true</Quiet>${batch.map((key) => `<Object><Key>${escapeXml(key)}</Key></Object>`).join('')}</Delete>`
        // DeleteObjects requires a body digest; Content-MD5 is the one every S3-compatible server knows
        // (Web Crypto has no MD5, hence @noble/hashes).
        const headers = { 'content-md5': toBase64(md5(new TextEncoder().encode(body))), 'content-type': 'application/xml' }
        const response = await send('delete', batch[0] ?? '', `${bucketUrl}/?delete`, { method: 'POST', body, headers })
        const text = await response!.text()
        const failed = tags(text, 'Error')[0]
        if (failed !== undefined) throw new S3Error('delete', tag(failed, 'Key') ?? '', response!.status, tag(failed, 'Code') ?? '')
      }
    },
    async *list(prefix) {
      // ListObjects (v1) paged by marker, the last key of the page before: every S3-compatible store
      // has it, and the test server's v2 continuation tokens need a cipher OpenSSL 3 no longer has.
      let marker: string | undefined
      do {
        const query = new URLSearchParams({ 'max-keys': String(pageSize), prefix, ...(marker ? { marker } : {}) })
        const response = await send('list', prefix, `${bucketUrl}/?${query}`, { method: 'GET' })
        const text = await response!.text()
        let last: string | undefined
        for (const item of tags(text, 'Contents')) {
          const key = tag(item, 'Key')
          const modified = tag(item, 'LastModified')
          if (key === undefined) continue
          last = key
          yield {
            key,
            size: Number(tag(item, 'Size') ?? 0),
            modifiedAt: modified ? Date.parse(modified) : 0,
            etag: unquote(tag(item, 'ETag') ?? ''),
          }
        }
        marker = tag(text, 'IsTruncated') === 'true' ? (tag(text, 'NextMarker') ?? last) : undefined
      } while (marker)
    },
    async listUploads(prefix) {
      try {
        const response = await send('list multipart uploads', prefix, `${bucketUrl}/?uploads&prefix=${encodeURIComponent(prefix)}`, {
          method: 'GET',
        })
        return tags(await response!.text(), 'Upload').flatMap((item) => {
          const key = tag(item, 'Key')
          const uploadId = tag(item, 'UploadId')
          const initiated = tag(item, 'Initiated')
          return key !== undefined && uploadId ? [{ key, uploadId, initiatedAt: initiated ? Date.parse(initiated) : 0 }] : []
        })
      } catch (error) {
        // Some S3-compatible servers lack this call; a lifecycle rule (AbortIncompleteMultipartUpload) does the job there.
        if (error instanceof S3Error && (error.code === 'NotImplemented' || error.status === 501)) return []
        throw error
      }
    },
    async abortUpload(upload) {
      await abortMultipart(upload.key, upload.uploadId)
    },
  }
}

/** `bytes` as views of `size` bytes (the last one shorter). */
function* viewsOf(bytes: Uint8Array, size: number): Generator<Uint8Array> {
  for (let at = 0; at < bytes.byteLength; at += size) yield bytes.subarray(at, at + size)
}

/** `chunks` joined into one array of `length` bytes. */
function concat(chunks: Uint8Array[], length: number): Uint8Array {
  const all = new Uint8Array(length)
  let at = 0
  for (const chunk of chunks) {
    all.set(chunk, at)
    at += chunk.byteLength
  }
  return all
}

/**
 * The stream cut into parts of `size` bytes (the last one shorter, none empty), counting what it
 * reads. Stopping early (a failed part) cancels the stream, so its source learns the write is over.
 */
async function* partsOf(source: ReadableStream<Uint8Array>, size: number, onRead: (length: number) => void): AsyncGenerator<Uint8Array> {
  const reader = source.getReader()
  let pending: Uint8Array[] = []
  let pendingBytes = 0
  let finished = false
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      onRead(value.byteLength)
      pending.push(value)
      pendingBytes += value.byteLength
      while (pendingBytes >= size) {
        const all = concat(pending, pendingBytes)
        pending = [all.subarray(size)]
        pendingBytes = all.byteLength - size
        yield all.subarray(0, size)
      }
    }
    finished = true
    if (pendingBytes > 0) yield concat(pending, pendingBytes)
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined)
    reader.releaseLock()
  }
}
