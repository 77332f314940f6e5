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
  /** Bound on all files of the request together (a batch); the body may exceed it by the form's framing. */
  maxTotalBytes?: number
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
/** Form fields are options (numbers, names): 64 KB is far above any real one. */
const MAX_FIELD_BYTES = 64 * 1024
const MAX_FIELDS = 100
const MAX_PARTS = 10_000

/** `1.5` → "1.5", `2` → "2": sizes in the 413/402 text. */
export function formatMb(bytes: number): number {
  return Math.round((bytes / MB) * 10) / 10
}

/**
 * Streams a multipart upload into the file store while counting bytes, with busboy. Every bound
 * holds while the body streams: a file over its limit, a body over its total or a field over its
 * size ends the read at once (nothing past the limit is read or stored), and a declared length over
 * the total is refused before a byte is read. Every stream's errors are handled here: a truncated or
 * malformed body is a 400, a client that goes away ends the request, a store that fails (disk full)
 * keeps its own error. On any refusal the partial files are removed before the error is thrown.
 */
export async function readUploadStream(event: H3Event, options: UploadOptions): Promise<Upload> {
  const contentType = event.req.headers.get('content-type') ?? ''
  if (!/^multipart\/form-data/i.test(contentType)) {
    throw new ApiError(400, ERROR_TEXTS.malformedBody('expected a multipart/form-data body'))
  }
  const bounds = uploadBounds(Number(event.req.headers.get('content-length') ?? NaN), options)
  const body = requestBodyStream(event)
  if (!body) throw new ApiError(400, ERROR_TEXTS.malformedBody('expected a multipart/form-data body'))
  const read = startRead(body, createParser(contentType), options, bounds)
  try {
    await read.done
    await Promise.all(read.writes)
    if (read.failed) throw read.failed
  } catch (error) {
    await Promise.allSettled(read.writes)
    await removeAll(options.files, read.written)
    throw error
  }
  return { fields: read.fields, files: read.written }
}

/** The request's size bounds and their errors, from the options and the declared length. */
interface UploadBounds {
  maxBodyBytes: number
  tooLarge(bytes: number): ApiError
  bodyTooLarge(bytes: number): ApiError
}

/** Works out the bounds, and refuses from the headers a body declared too large, before a byte is read (and before `100 Continue` is sent). */
function uploadBounds(declared: number, options: UploadOptions): UploadBounds {
  // A single file's size is its request's declared length, give or take the form's few hundred bytes.
  const sizeOf = (seen: number) => (options.maxFiles === 1 && declared > seen ? declared : seen)
  const filesBound = Math.min(options.maxFiles * options.maxFileBytes, options.maxTotalBytes ?? Infinity)
  const maxBodyBytes = filesBound + FORM_OVERHEAD_BYTES
  const bounds: UploadBounds = {
    maxBodyBytes,
    tooLarge: (bytes) =>
      new ApiError(
        options.limitStatus,
        (options.tooLargeText ?? ERROR_TEXTS.fileTooLarge)(formatMb(sizeOf(bytes)), formatMb(options.maxFileBytes)),
      ),
    bodyTooLarge: (bytes) => new ApiError(413, ERROR_TEXTS.requestTooLarge(bytes, maxBodyBytes)),
  }
  if (options.maxFiles === 1 && declared > options.maxFileBytes + FORM_OVERHEAD_BYTES) throw bounds.tooLarge(declared)
  if (declared > maxBodyBytes) throw bounds.bodyTooLarge(declared)
  return bounds
}

function createParser(contentType: string): busboy.Busboy {
  try {
    return busboy({
      headers: { 'content-type': contentType },
      limits: { fieldSize: MAX_FIELD_BYTES, fields: MAX_FIELDS, parts: MAX_PARTS, headerPairs: 100 },
      defParamCharset: 'utf8',
    })
  } catch (error) {
    throw new ApiError(400, ERROR_TEXTS.malformedBody((error as Error).message))
  }
}

/** One upload being read: what arrived so far, and the one way it fails. */
interface UploadRead {
  readonly options: UploadOptions
  readonly bounds: UploadBounds
  readonly fields: Record<string, string>
  readonly written: UploadedFile[]
  readonly writes: Promise<void>[]
  /** File parts still streaming into the store: destroyed when the request fails. */
  readonly open: Set<Transform>
  fileParts: number
  /** The first failure, once there is one. */
  failed: Error | undefined
  /** Settles when the parser has read the whole form, or rejects with the first failure. */
  readonly done: Promise<void>
  fail(error: Error): void
}

const malformed = (error: Error) => new ApiError(400, ERROR_TEXTS.malformedBody(error.message))

/** Feeds the body to the parser, counting its bytes, and routes every part and every stream's error. */
function startRead(body: Readable, parser: busboy.Busboy, options: UploadOptions, bounds: UploadBounds): UploadRead {
  let failRead: (error: Error) => void = () => undefined
  let bodyBytes = 0
  const countBody = (chunk: Buffer) => {
    bodyBytes += chunk.length
    if (bodyBytes > bounds.maxBodyBytes) read.fail(bounds.bodyTooLarge(bodyBytes))
  }
  const read: UploadRead = {
    options,
    bounds,
    fields: {},
    written: [],
    writes: [],
    open: new Set(),
    fileParts: 0,
    failed: undefined,
    done: new Promise<void>((resolve, reject) => {
      parser.on('close', resolve)
      failRead = reject
    }),
    // The first failure ends the read: stop feeding the parser, cut every file still being written
    // (its store write then rejects and removes its temp file), and let whatever remains of the body
    // go to the listener's lingering close.
    fail(error) {
      if (read.failed) return
      read.failed = error
      body.unpipe(parser)
      body.off('data', countBody)
      body.pause()
      for (const counter of read.open) counter.destroy(error)
      parser.removeAllListeners('field')
      parser.removeAllListeners('file')
      parser.on('error', () => undefined)
      parser.destroy()
      failRead(error)
    },
  }
  const fail = read.fail
  parser.on('field', (name, value, info) => {
    if (info.nameTruncated || info.valueTruncated)
      return fail(new ApiError(400, ERROR_TEXTS.malformedBody(`form field ${name} is longer than ${MAX_FIELD_BYTES} bytes`)))
    if (!(name in read.fields)) read.fields[name] = value
  })
  parser.on('fieldsLimit', () => fail(new ApiError(400, ERROR_TEXTS.malformedBody(`more than ${MAX_FIELDS} form fields`))))
  parser.on('partsLimit', () => fail(new ApiError(400, ERROR_TEXTS.malformedBody(`more than ${MAX_PARTS} form parts`))))
  parser.on('file', (name, stream, info) => takeFilePart(read, name, stream, info.filename))
  parser.on('error', (error: Error) => fail(malformed(error)))
  body.on('data', countBody)
  body.on('error', (error: Error) => fail(malformed(error)))
  // A client that goes away mid-body: the body closes without having ended.
  body.on('close', () => {
    if (!body.readableEnded) fail(new ApiError(400, ERROR_TEXTS.malformedBody('the request body ended before it was complete')))
  })
  body.pipe(parser)
  return read
}

/** A file part: skipped unless it is the file field, refused past the count or by `place`, else streamed into the store. */
function takeFilePart(read: UploadRead, name: string, stream: Readable, rawFilename: string | undefined): void {
  const { options, fail } = read
  // busboy reports a body cut inside a part on the part's own stream: always listened to.
  stream.on('error', (error: Error) => fail(malformed(error)))
  if (name !== options.fileField || read.failed) return void stream.resume()
  read.fileParts++
  if (read.fileParts > options.maxFiles) {
    stream.resume()
    if (options.onTooManyFiles) fail(options.onTooManyFiles(read.fileParts))
    return
  }
  const filename = (rawFilename ?? '').replace(/^.*[\\/]/, '')
  let key: string
  try {
    key = options.place(filename).key
  } catch (error) {
    stream.resume()
    return fail(error instanceof Error ? error : new Error(String(error)))
  }
  const counter = countBytes(options.maxFileBytes, read.bounds.tooLarge, fail)
  read.open.add(counter)
  // Destroyed with the request's error when it fails (a part's own error fails the read above,
  // which destroys every open counter); the store sees that through its own read.
  counter.on('error', () => undefined)
  read.writes.push(
    options.files.write(key, stream.pipe(counter)).then(
      (size) => {
        read.open.delete(counter)
        read.written.push({ filename, key, size })
        if (counter.seen > options.maxFileBytes) fail(read.bounds.tooLarge(counter.seen))
      },
      (error: unknown) => {
        read.open.delete(counter)
        // The store's own failure (disk full, S3 down) keeps its error for renderError.
        fail(read.failed ?? (error instanceof Error ? error : new Error(String(error))))
      },
    ),
  )
}

/**
 * Passes bytes through up to `limit` and stores nothing past it. A little more is still read and
 * counted (half the limit, at most 0.9 MB), so a file slightly over is reported with its real size;
 * past that the request is cut at once, so an oversized body is never read to 2× the limit. The
 * size reported then is the declared one when the request has a length, else what arrived until
 * the cut (a lower bound).
 */
function countBytes(limit: number, tooLarge: (seen: number) => ApiError, cut: (error: ApiError) => void): Transform & { seen: number } {
  const slack = Math.min(0.9 * MB, 0.5 * limit)
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      counter.seen += chunk.length
      if (counter.seen > limit + slack) cut(tooLarge(counter.seen))
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
export function requestBodyStream(event: H3Event): Readable | undefined {
  const node = (event.req as { runtime?: { node?: { req?: IncomingMessage } } }).runtime?.node?.req
  if (node) return node
  return event.req.body ? Readable.fromWeb(event.req.body as unknown as NodeWebReadableStream<Uint8Array>) : undefined
}

async function removeAll(files: FileStore, written: UploadedFile[]): Promise<void> {
  await Promise.allSettled(written.map((file) => files.remove(file.key)))
}
