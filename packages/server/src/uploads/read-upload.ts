import type { IncomingMessage } from 'node:http'
import { Readable, Transform } from 'node:stream'
import type { ReadableStream as NodeWebReadableStream } from 'node:stream/web'
import busboy from 'busboy'
import { ERROR_TEXTS } from '@mos/sdk/contract'
import type { H3Event } from 'h3'
import { ApiError } from '../errors.ts'
import type { FileStore } from '../storage/file-store.ts'

export interface UploadOptions {
  files: FileStore
  /** Form part that carries the file(s): `file`, or `files` for a batch. */
  fileField: string
  /** Most file parts taken; `onTooManyFiles` decides what happens past it. */
  maxFiles: number
  maxFileBytes: number
  /** Status when a file is too large: 413 in variant A, 402 in B. */
  limitStatus: number
  /** Text of the too-large error; the contract's file-size text unless given (e.g. the texture text). */
  tooLargeText?: (sizeMb: number, limitMb: number) => string
  /** Decides where a file part goes; throws an ApiError to refuse it (e.g. unsupported format). */
  place(filename: string): { key: string }
  onTooManyFiles?: (count: number) => ApiError
}

export interface UploadedFile {
  filename: string
  key: string
  size: number
}

export interface Upload {
  fields: Record<string, string>
  files: UploadedFile[]
}

const MB = 1024 * 1024
/** Multipart framing and the small form fields, on top of the files themselves. */
const FORM_OVERHEAD_BYTES = 1 * MB

/** `1.5` → "1.5", `2` → "2": sizes in the 413/402 text. */
export function formatMb(bytes: number): number {
  return Math.round((bytes / MB) * 10) / 10
}

/**
 * Streams a multipart upload into the file store while counting bytes, with busboy. A file over the
 * limit is cut off, removed, and answered with the contract's size error; nothing is held in memory.
 * On any refusal every file this request wrote is removed before the error is thrown.
 */
export async function readUploadStream(event: H3Event, options: UploadOptions): Promise<Upload> {
  const contentType = event.req.headers.get('content-type') ?? ''
  const body = requestBodyStream(event)
  if (!/^multipart\/form-data/i.test(contentType) || !body) {
    throw new ApiError(400, ERROR_TEXTS.malformedBody('expected a multipart/form-data body'))
  }
  const declared = Number(event.req.headers.get('content-length') ?? NaN)
  const tooLarge = (bytes: number) =>
    new ApiError(options.limitStatus, (options.tooLargeText ?? ERROR_TEXTS.fileTooLarge)(formatMb(bytes), formatMb(options.maxFileBytes)))
  // A single-file request that declares more than the limit is refused before reading a byte.
  if (options.maxFiles === 1 && declared > options.maxFileBytes + FORM_OVERHEAD_BYTES) throw tooLarge(declared)

  let parser: busboy.Busboy
  try {
    parser = busboy({
      headers: { 'content-type': contentType },
      limits: { fieldSize: MB, fields: 100, parts: 10_000 },
      defParamCharset: 'utf8',
    })
  } catch (error) {
    throw new ApiError(400, ERROR_TEXTS.malformedBody((error as Error).message))
  }

  const fields: Record<string, string> = {}
  const written: UploadedFile[] = []
  const writes: Promise<void>[] = []
  let refusal: ApiError | undefined
  let fileParts = 0
  const refuse = (error: ApiError) => (refusal ??= error)

  parser.on('field', (name, value) => {
    if (!(name in fields)) fields[name] = value
  })
  parser.on('file', (name, stream, info) => {
    if (name !== options.fileField || refusal) return void stream.resume()
    fileParts++
    if (fileParts > options.maxFiles) {
      if (options.onTooManyFiles) refuse(options.onTooManyFiles(fileParts))
      return void stream.resume()
    }
    const filename = (info.filename ?? '').replace(/^.*[\\/]/, '')
    let key: string
    try {
      key = options.place(filename).key
    } catch (error) {
      refuse(error as ApiError)
      return void stream.resume()
    }
    const counter = countBytes(options.maxFileBytes)
    writes.push(
      options.files.write(key, stream.pipe(counter)).then((size) => {
        written.push({ filename, key, size })
        if (counter.seen > options.maxFileBytes) refuse(tooLarge(counter.seen))
      }),
    )
  })

  try {
    await new Promise<void>((resolve, reject) => {
      parser.on('close', resolve)
      parser.on('error', (error: Error) => reject(new ApiError(400, ERROR_TEXTS.malformedBody(error.message))))
      body.on('error', reject)
      body.pipe(parser)
    })
    await Promise.all(writes)
  } catch (error) {
    await Promise.allSettled(writes)
    await removeAll(options.files, written)
    throw error instanceof ApiError ? error : new ApiError(400, ERROR_TEXTS.malformedBody((error as Error).message))
  }
  if (refusal) {
    await removeAll(options.files, written)
    throw refusal
  }
  return { fields, files: written }
}

/**
 * Passes bytes through up to `limit`, then only counts the rest, so an oversized file is reported
 * with its real size while nothing past the limit is stored.
 */
function countBytes(limit: number): Transform & { seen: number } {
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      counter.seen += chunk.length
      callback(null, counter.seen > limit ? undefined : chunk)
    },
  }) as Transform & { seen: number }
  counter.seen = 0
  return counter
}

/**
 * The request body as a Node stream. Served by Node, that is the IncomingMessage itself: going
 * through the web stream h3 would build costs a conversion each way (a 27 MB upload spent ~0.1 s
 * there). Elsewhere (in-process `app.fetch`) it is the web body.
 */
function requestBodyStream(event: H3Event): Readable | undefined {
  const node = (event.req as { runtime?: { node?: { req?: IncomingMessage } } }).runtime?.node?.req
  if (node) return node
  return event.req.body ? Readable.fromWeb(event.req.body as unknown as NodeWebReadableStream<Uint8Array>) : undefined
}

async function removeAll(files: FileStore, written: UploadedFile[]): Promise<void> {
  await Promise.allSettled(written.map((file) => files.remove(file.key)))
}
