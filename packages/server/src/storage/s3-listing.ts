import { S3Error, type S3Sender } from './s3-request.ts'
import { tag, tags, unquote } from './s3-xml.ts'

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

/** A date of S3's, or 0 where there is none. */
const timeOf = (date: string | null | undefined) => (date ? Date.parse(date) : 0)

/** The object's size and change time from the headers of its HEAD. */
export function objectOfHead(key: string, headers: Headers): S3Object {
  return {
    key,
    size: Number(headers.get('content-length') ?? 0),
    modifiedAt: timeOf(headers.get('last-modified')),
    etag: unquote(headers.get('etag') ?? ''),
  }
}

/**
 * Every object under `prefix`, `pageSize` keys a page. ListObjects (v1) paged by marker, the last
 * key of the page before: every S3-compatible store has it, and the test server's v2 continuation
 * tokens need a cipher OpenSSL 3 no longer has.
 */
export async function* listObjects(sender: S3Sender, prefix: string, pageSize: number): AsyncGenerator<S3Object> {
  let marker: string | undefined
  do {
    const query = new URLSearchParams({ 'max-keys': String(pageSize), prefix, ...(marker ? { marker } : {}) })
    const response = await sender.send('list', prefix, `${sender.bucketUrl}/?${query}`, { method: 'GET' })
    const text = await response.text()
    let last: string | undefined
    for (const item of tags(text, 'Contents')) {
      const key = tag(item, 'Key')
      if (key === undefined) continue
      last = key
      yield {
        key,
        size: Number(tag(item, 'Size') ?? 0),
        modifiedAt: timeOf(tag(item, 'LastModified')),
        etag: unquote(tag(item, 'ETag') ?? ''),
      }
    }
    marker = tag(text, 'IsTruncated') === 'true' ? (tag(text, 'NextMarker') ?? last) : undefined
  } while (marker)
}

/** Unfinished multipart uploads under `prefix`; empty where the server lacks the call. */
export async function listUploads(sender: S3Sender, prefix: string): Promise<S3MultipartUpload[]> {
  try {
    const url = `${sender.bucketUrl}/?uploads&prefix=${encodeURIComponent(prefix)}`
    const response = await sender.send('list multipart uploads', prefix, url, { method: 'GET' })
    return tags(await response.text(), 'Upload').flatMap((item) => {
      const key = tag(item, 'Key')
      const uploadId = tag(item, 'UploadId')
      return key !== undefined && uploadId ? [{ key, uploadId, initiatedAt: timeOf(tag(item, 'Initiated')) }] : []
    })
  } catch (error) {
    // Some S3-compatible servers lack this call; a lifecycle rule (AbortIncompleteMultipartUpload) does the job there.
    if (error instanceof S3Error && (error.code === 'NotImplemented' || error.status === 501)) return []
    throw error
  }
}
