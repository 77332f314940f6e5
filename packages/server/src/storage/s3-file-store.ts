import { Readable, Transform } from 'node:stream'
import {
  AbortMultipartUploadCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import { FileNotFoundError, type FileStore, type StoredFile } from './file-store.ts'

export interface S3Options {
  /** S3-compatible endpoint; empty for AWS S3 itself. */
  endpoint: string
  bucket: string
  region: string
  /** Empty: the AWS SDK's default credential chain (environment, instance role ...). */
  accessKeyId: string
  secretAccessKey: string
  /** Prepended to every key (`files/` is added by the caller). */
  prefix: string
}

/** Parts of a multipart upload: S3's minimum is 5 MiB; at most `QUEUE_SIZE` parts are in memory per upload. */
const PART_BYTES = 8 * 1024 * 1024
const QUEUE_SIZE = 2

/** An S3 client for an endpoint: path-style addressing, which every S3-compatible server supports. */
export function createS3Client(options: S3Options): S3Client {
  const config: S3ClientConfig = {
    region: options.region,
    forcePathStyle: Boolean(options.endpoint),
    // Other S3-compatible stores: checksums only where S3 requires them (several stores reject the
    // SDK's default extra checksum headers).
    ...(options.endpoint
      ? { endpoint: options.endpoint, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' }
      : {}),
    ...(options.accessKeyId
      ? { credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } }
      : {}),
  }
  return new S3Client(config)
}

const isMissing = (error: unknown) => {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } }
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404
}

/**
 * Files in an S3 bucket. Uploads stream in parts (multipart upload, `PART_BYTES` each), so a large
 * upload holds at most a few parts in memory; the object appears only when the upload completes,
 * so readers never see half a file and a killed process leaves no object (only an unfinished
 * multipart upload, which `abortStaleUploads` or a bucket lifecycle rule removes).
 */
export function createS3FileStore(options: S3Options): FileStore & { abortStaleUploads(olderThanMs: number): Promise<number> } {
  const client = createS3Client(options)
  const Bucket = options.bucket
  const full = (key: string) => `${options.prefix}${key}`
  const missing = (key: string) => new FileNotFoundError(`[storage] [s3] no such file: ${key}`)

  async function* listObjects(prefix: string): AsyncGenerator<StoredFile> {
    let ContinuationToken: string | undefined
    do {
      const page = await client.send(new ListObjectsV2Command({ Bucket, Prefix: full(prefix), ContinuationToken }))
      for (const item of page.Contents ?? []) {
        if (item.Key) yield { key: item.Key.slice(options.prefix.length), modifiedAt: item.LastModified?.getTime() ?? 0 }
      }
      ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined
    } while (ContinuationToken)
  }

  return {
    async write(key, source) {
      let bytes = 0
      let body: Uint8Array | Readable = source
      if (source instanceof Uint8Array) {
        bytes = source.byteLength
      } else {
        const counter = new Transform({
          transform(chunk: Buffer, _encoding, callback) {
            bytes += chunk.length
            callback(null, chunk)
          },
        })
        source.on('error', (error) => counter.destroy(error))
        body = source.pipe(counter)
      }
      const upload = new Upload({
        client,
        params: { Bucket, Key: full(key), Body: body },
        partSize: PART_BYTES,
        queueSize: QUEUE_SIZE,
        leavePartsOnError: false,
      })
      await upload.done()
      return bytes
    },
    async read(key) {
      try {
        const object = await client.send(new GetObjectCommand({ Bucket, Key: full(key) }))
        return object.Body as Readable
      } catch (error) {
        if (isMissing(error)) throw missing(key)
        throw error
      }
    },
    async readBytes(key) {
      const stream = await this.read(key)
      const chunks: Buffer[] = []
      for await (const chunk of stream) chunks.push(chunk as Buffer)
      return new Uint8Array(Buffer.concat(chunks))
    },
    async size(key) {
      try {
        return (await client.send(new HeadObjectCommand({ Bucket, Key: full(key) }))).ContentLength
      } catch (error) {
        if (isMissing(error)) return undefined
        throw error
      }
    },
    async remove(key) {
      // The key itself and everything under `key/` (a task's folder), in batches of S3's maximum.
      const keys = [full(key)]
      for await (const file of listObjects(`${key}/`)) keys.push(full(file.key))
      for (let i = 0; i < keys.length; i += 1000) {
        await client.send(
          new DeleteObjectsCommand({ Bucket, Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })), Quiet: true } }),
        )
      }
    },
    list: listObjects,
    async abortStaleUploads(olderThanMs) {
      // Unfinished multipart uploads of killed processes. Some S3-compatible servers lack this call;
      // a lifecycle rule (AbortIncompleteMultipartUpload) does the same job there.
      let aborted = 0
      try {
        const page = await client.send(new ListMultipartUploadsCommand({ Bucket, Prefix: full('') }))
        for (const upload of page.Uploads ?? []) {
          if (upload.Initiated && Date.now() - upload.Initiated.getTime() > olderThanMs && upload.Key && upload.UploadId) {
            await client.send(new AbortMultipartUploadCommand({ Bucket, Key: upload.Key, UploadId: upload.UploadId }))
            aborted++
          }
        }
      } catch (error) {
        if ((error as { name?: string }).name !== 'NotImplemented') throw error
      }
      return aborted
    },
    async close() {
      client.destroy()
    },
  }
}
