import { md5 } from '@noble/hashes/legacy.js'
import { ConfigError } from '../config/load.ts'
import { toBase64 } from '../web-crypto.ts'
import { listObjects, listUploads, objectOfHead, type S3MultipartUpload, type S3Object } from './s3-listing.ts'
import { createS3Sender, S3Error, type S3Sender, type S3SenderOptions } from './s3-request.ts'
import { abortMultipart, putObject, type S3Body } from './s3-upload.ts'
import { escapeXml, tag, tags } from './s3-xml.ts'

export { S3Error } from './s3-request.ts'
export type { S3MultipartUpload, S3Object } from './s3-listing.ts'

/** The bucket, its endpoint and credentials (as the sender takes them), and how the client pages and retries. */
export interface S3ClientOptions extends Omit<S3SenderOptions, 'retries'> {
  /** Bytes per part of a multipart upload (S3's minimum is 5 MiB); a smaller body goes in one PUT. */
  partBytes?: number
  /** Parts in flight per upload: at most `partBytes × (queueSize + 1)` of an upload is in memory. */
  queueSize?: number
  /** How often a request answered 5xx / 429 or refused by the network is sent again (with backoff). */
  retries?: number
  /** Keys per listing page (S3's maximum is 1000). */
  pageSize?: number
}

export const S3_CLIENT_DEFAULTS = { partBytes: 8 * 1024 * 1024, queueSize: 2, retries: 3, pageSize: 1000 } as const

/**
 * The one S3 client of a process: SigV4 over fetch (aws4fetch), shared by the records driver and
 * the file store. Keys are bucket keys; callers add their own folders.
 */
export interface S3Client {
  /** The object's body as a web stream, or undefined when absent. */
  get(key: string): Promise<ReadableStream<Uint8Array> | undefined>
  /** Writes `body` whole; a stream longer than one part goes up as a multipart upload. Resolves to the byte count. */
  put(key: string, body: S3Body): Promise<number>
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

/** Creates the S3 client for a bucket: path-style addressing on an endpoint (every S3-compatible server has it). */
export function createS3Client(options: S3ClientOptions): S3Client {
  const uploads = {
    partBytes: options.partBytes ?? S3_CLIENT_DEFAULTS.partBytes,
    queueSize: options.queueSize ?? S3_CLIENT_DEFAULTS.queueSize,
  }
  const pageSize = options.pageSize ?? S3_CLIENT_DEFAULTS.pageSize
  const sender = createS3Sender({ ...options, retries: options.retries ?? S3_CLIENT_DEFAULTS.retries })
  return {
    async get(key) {
      const response = await sender.sendOrMissing('get', key, sender.urlOf(key), { method: 'GET' })
      return response?.body ?? (response ? new Blob([]).stream() : undefined)
    },
    put: (key, body) => putObject(sender, uploads, key, body),
    async head(key) {
      const response = await sender.sendOrMissing('head', key, sender.urlOf(key), { method: 'HEAD' })
      return response ? objectOfHead(key, response.headers) : undefined
    },
    delete: (keys) => deleteObjects(sender, keys),
    list: (prefix) => listObjects(sender, prefix, pageSize),
    listUploads: (prefix) => listUploads(sender, prefix),
    abortUpload: (upload) => abortMultipart(sender, upload.key, upload.uploadId),
  }
}

/** Removes the keys in batches of S3's maximum of 1000 (DeleteObjects); absent keys are no error. */
async function deleteObjects(sender: S3Sender, keys: string[]): Promise<void> {
  for (let i = 0; i < keys.length; i += 1000) {
    const batch = keys.slice(i, i + 1000)
    const body = `<Delete><Quiet>true</Quiet>${batch.map((key) => `<Object><Key>${escapeXml(key)}</Key></Object>`).join('')}</Delete>`
    // DeleteObjects requires a body digest; Content-MD5 is the one every S3-compatible server knows
    // (Web Crypto has no MD5, hence @noble/hashes).
    const headers = { 'content-md5': toBase64(md5(new TextEncoder().encode(body))), 'content-type': 'application/xml' }
    const response = await sender.send('delete', batch[0] ?? '', `${sender.bucketUrl}/?delete`, { method: 'POST', body, headers })
    const text = await response.text()
    const failed = tags(text, 'Error')[0]
    if (failed !== undefined) throw new S3Error('delete', tag(failed, 'Key') ?? '', response.status, tag(failed, 'Code') ?? '')
  }
}
