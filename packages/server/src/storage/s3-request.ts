import { AwsClient } from 'aws4fetch'
import { tag } from './s3-xml.ts'
import { errorText } from '../error-text.ts'

/** First back-off after a failed attempt; doubled each time, with full jitter. */
const RETRY_BASE_MS = 100

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

export interface S3SenderOptions {
  /** S3-compatible endpoint; empty for AWS S3 itself. */
  endpoint: string
  bucket: string
  region: string
  accessKeyId: string
  secretAccessKey: string
  sessionToken?: string
  /** How often a request answered 5xx / 429 or refused by the network is sent again. */
  retries: number
  /** The fetch to send signed requests with (tests count requests through it). */
  fetch?: (request: Request) => Promise<Response>
}

/** Signed requests to one bucket, sent again after a passing failure, their failures as `S3Error`s. */
export interface S3Sender {
  /** The bucket's own URL (bucket-wide calls such as listing add their query to it). */
  bucketUrl: string
  /** The URL of `key` in the bucket, with an optional query. */
  urlOf(key: string, query?: string): string
  /** One signed request; throws `S3Error` for any answer but 2xx. */
  send(operation: string, key: string, url: string, init: RequestInit): Promise<Response>
  /** As `send`, but a 404 is no error: it resolves to undefined. */
  sendOrMissing(operation: string, key: string, url: string, init: RequestInit): Promise<Response | undefined>
}

/** Keys as S3 expects them in a path: each segment percent-encoded, slashes kept. */
const encodeKey = (key: string) => key.split('/').map(encodeURIComponent).join('/')

/** The sender for a bucket: path-style addressing on an endpoint (every S3-compatible server has it). */
export function createS3Sender(options: S3SenderOptions): S3Sender {
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

  /** Signs and sends, again with backoff after a 5xx, a 429 or a network failure (bodies are bytes, so resendable). */
  async function withRetries(url: string, init: RequestInit): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      // Signed anew each time: a signature is only valid for a few minutes.
      const request = await aws.sign(url, init)
      try {
        const response = await fetchSigned(request)
        if ((response.status < 500 && response.status !== 429) || attempt >= options.retries) return response
        await response.body?.cancel()
      } catch (error) {
        if (attempt >= options.retries) throw error
      }
      await new Promise((resolve) => setTimeout(resolve, Math.random() * RETRY_BASE_MS * 2 ** attempt))
    }
  }

  async function sendSigned(
    operation: string,
    key: string,
    url: string,
    init: RequestInit,
    missingOk: boolean,
  ): Promise<Response | undefined> {
    let response: Response
    try {
      response = await withRetries(url, init)
    } catch (error) {
      const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : ''
      throw new S3Error(operation, key, 0, `${errorText(error)}${cause}`, { cause: error })
    }
    if (response.ok) return response
    const body = await response.text().catch(() => '')
    if (missingOk && response.status === 404) return undefined
    throw new S3Error(operation, key, response.status, tag(body, 'Code') ?? '')
  }

  return {
    bucketUrl,
    urlOf: (key, query = '') => `${bucketUrl}/${encodeKey(key)}${query ? `?${query}` : ''}`,
    // Without `missingOk` every answer but 2xx throws, so there is always a response.
    send: async (operation, key, url, init) => (await sendSigned(operation, key, url, init, false)) as Response,
    sendOrMissing: (operation, key, url, init) => sendSigned(operation, key, url, init, true),
  }
}
