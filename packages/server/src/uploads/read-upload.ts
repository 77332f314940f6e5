import { ERROR_TEXTS } from '@mos/sdk/contract'
import type { H3Event } from 'h3'
import { ApiError } from '../errors.ts'
import { REFUSAL_LINGER } from '../refusal-linger.ts'
import type { FileStore } from '../storage/file-store.ts'
import { createFormParser, formBoundary, type FormParser } from './form-parser.ts'
import { readRequestBody, type BodyChunks } from './request-body.ts'

export interface UploadOptions {
  files: FileStore
  /** Form part that carries the file(s): `file`, or `files` for a batch. */
  fileField: string
  /** Most file parts taken; past it, `onTooManyFiles` refuses the request (by default as a part given more than once). */
  maxFiles: number
  maxFileBytes: number
  /** Bound on all files of the request together (a batch); the body may exceed it by the form's framing. */
  maxTotalBytes?: number
  /** A body that sends no byte for this long is refused with 408 (SERVICE__SERVER__BODY_IDLE_TIMEOUT_MS). */
  bodyIdleMs: number
  /** Status when a file is too large: 413 in variant A, 402 in B. */
  limitStatus: number
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
/**
 * Bytes of one file part queued for the store before the body is read on: the store's write pace
 * is the upload's pace, and an upload holds about this much in memory per file being written.
 */
const FILE_QUEUE_BYTES = 1 * MB

/** `1.5` → "1.5", `2` → "2": sizes in the 413/402 text. */
export function formatMb(bytes: number): number {
  return Math.round((bytes / MB) * 10) / 10
}

/** As formatMb, rounded down: a lower bound stays one ("over 10MB" of a file of 10.04 MB read). */
const floorMb = (bytes: number) => Math.floor((bytes / MB) * 10) / 10

/**
 * How far past its limit a file is still read (not stored) and counted, so that the refusal gives its
 * real size: a quarter of the limit (a 52 MB file on the trial's 50 MB is read to its end and reported
 * as 52MB), at most what the listener reads off after any refusal (REFUSAL_LINGER.bytes). Past it the
 * request is refused at once: an oversized body never costs more than 1.25× the limit before its
 * answer, and a client that stops on an early answer (curl) stops sending there. A quarter, not a
 * half: with half of a 1 MB limit, a chunked body was read to 2 MB and 131 bytes before its answer,
 * the parser's and the socket's buffers coming on top.
 */
export function countedPastLimit(limit: number): number {
  return Math.min(0.25 * limit, REFUSAL_LINGER.bytes)
}

const malformed = (detail: string) => new ApiError(400, ERROR_TEXTS.malformedBody(detail))

/** The 400 for a form part sent twice where one is taken (a field, or the file of a single-file route). */
export const duplicated = (name: string) => new ApiError(400, ERROR_TEXTS.invalidField(name, 'given more than once'))

/**
 * Streams a multipart upload into the file store while counting bytes, on the request's web body
 * (any runtime). Every bound holds while the body streams: nothing of a file past its limit is
 * stored, and it is refused with its real size once it ends, or at once when it goes on further than
 * `countedPastLimit`; a body over its total or a field over its size ends the read at once, and a
 * declared length over the total is refused before a byte is read. A truncated or malformed body
 * is a 400, a store that fails (disk full) keeps its own error. On any refusal the files still being
 * written are cut (the store removes what they had written) and the finished ones removed before
 * the error is thrown. The rest of a refused body is left unread: how a connection ends after an
 * early answer is the listener's business (node-listener.ts reads it off and closes).
 */
export async function readUploadStream(event: H3Event, options: UploadOptions): Promise<Upload> {
  const contentType = event.req.headers.get('content-type') ?? ''
  if (!/^multipart\/form-data/i.test(contentType)) throw malformed('expected a multipart/form-data body')
  // From the headers, before a byte of the body is read (or `100 Continue` sent).
  const boundary = formBoundary(contentType)
  if ('refused' in boundary) throw malformed(boundary.refused)
  const bounds = uploadBounds(Number(event.req.headers.get('content-length') ?? NaN), options)
  const body = readRequestBody(event, options.bodyIdleMs)
  if (!body) throw malformed('expected a multipart/form-data body')
  const read = createUploadRead(options, bounds)
  const parser = createFormParser(contentType, read.handlers)
  try {
    await pump(body, parser, read, bounds)
    await Promise.all(read.writes)
    if (read.failed) throw read.failed
  } catch (error) {
    read.fail(asError(error))
    await Promise.allSettled(read.writes)
    await removeAll(options.files, read.written)
    throw read.failed ?? error
  }
  return { fields: read.fields, files: read.written }
}

/** The request's size bounds and their errors, from the options and the declared length. */
interface UploadBounds {
  /** The most a body may hold: a declared length over it is refused from the headers. */
  maxBodyBytes: number
  /**
   * The most of a streamed body read before it is refused: `maxBodyBytes` and what is counted of a
   * file past its limit, so a file a little over is refused with its own size, not as a body too large.
   */
  maxReadBytes: number
  /** The file-size refusal for a file of `bytes`; `cut`: read only up to the bound, so at least that many. */
  tooLarge(bytes: number, cut?: boolean): ApiError
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
    maxReadBytes: maxBodyBytes + countedPastLimit(options.maxFileBytes),
    tooLarge: (bytes, cut = false) => {
      const limitMb = formatMb(options.maxFileBytes)
      const size = sizeOf(bytes)
      // A declared length is the real size even when the read stopped early; else a cut file is "over" what was read.
      const text =
        cut && size === bytes ? ERROR_TEXTS.fileTooLargeOver(floorMb(size), limitMb) : ERROR_TEXTS.fileTooLarge(formatMb(size), limitMb)
      return new ApiError(options.limitStatus, text)
    },
    bodyTooLarge: (bytes) => new ApiError(413, ERROR_TEXTS.requestTooLarge(bytes, maxBodyBytes)),
  }
  if (options.maxFiles === 1 && declared > options.maxFileBytes + FORM_OVERHEAD_BYTES) throw bounds.tooLarge(declared)
  if (declared > maxBodyBytes) throw bounds.bodyTooLarge(declared)
  return bounds
}

/**
 * Feeds the body to the parser chunk by chunk, counting its bytes, until the form ends or the read
 * fails. Before each next chunk it waits for room in the file being written (the store's pace).
 */
async function pump(body: BodyChunks, parser: FormParser, read: UploadRead, bounds: UploadBounds): Promise<void> {
  let bodyBytes = 0
  while (!read.failed) {
    const next = await read.orStopped(body.next())
    if (next === STOPPED || read.failed) return
    if ('stalled' in next) return read.fail(next.stalled)
    if ('error' in next) return read.fail(malformed('the request body ended before it was complete'))
    if (next.done) {
      const ended = parser.end()
      if (ended) read.fail(malformed(ended))
      return
    }
    bodyBytes += next.value.byteLength
    if (bodyBytes > bounds.maxReadBytes) return read.fail(bounds.bodyTooLarge(bodyBytes))
    const refused = parser.write(next.value)
    if (refused) return read.fail(malformed(refused))
    await read.orStopped(read.room())
  }
}

const STOPPED = Symbol('stopped')

/** One upload being read: what arrived so far, and the one way it fails. */
interface UploadRead {
  readonly fields: Record<string, string>
  readonly written: UploadedFile[]
  readonly writes: Promise<void>[]
  /** The first failure, once there is one. */
  readonly failed: Error | undefined
  /**
   * `promise`'s outcome, or STOPPED at the first failure, whichever comes first. Not a
   * `Promise.race` with one long-lived "stopped" promise: each race leaves a reaction on it that
   * holds the race's result, so every chunk read would stay in memory until the upload ended.
   */
  orStopped<T>(promise: Promise<T>): Promise<T | typeof STOPPED>
  /** Resolves once every file being written has room for more bytes. */
  room(): Promise<void>
  /** The first failure ends the read and cuts every file still being written. */
  fail(error: Error): void
  readonly handlers: Parameters<typeof createFormParser>[1]
}

function createUploadRead(options: UploadOptions, bounds: UploadBounds): UploadRead {
  const open = new Set<FilePart>()
  const stops = createStops()
  let fileParts = 0
  const read: UploadRead = {
    // No prototype: a field named `constructor` or `__proto__` is a field like any other.
    fields: Object.create(null) as Record<string, string>,
    written: [],
    writes: [],
    failed: undefined,
    orStopped: (promise) => (read.failed ? Promise.resolve(STOPPED) : stops.wait(promise)),
    async room() {
      for (const file of open) await file.room()
    },
    fail(error) {
      if (read.failed) return
      ;(read as { failed: Error | undefined }).failed = error
      stops.stop()
      for (const file of open) file.cut(error)
    },
    handlers: {
      field(name, value) {
        if (read.failed) return
        // Two values for one field are ambiguous (which did the client mean?): refused, where the first won.
        if (Object.hasOwn(read.fields, name)) return read.fail(duplicated(name))
        read.fields[name] = value
      },
      file(name, rawFilename) {
        if (read.failed || name !== options.fileField) return undefined
        fileParts++
        if (fileParts > options.maxFiles) {
          // A second `file` on a single-file route was dropped silently: refused, as a field given twice.
          read.fail(options.onTooManyFiles ? options.onTooManyFiles(fileParts) : duplicated(name))
          return undefined
        }
        return openFilePart(read, open, options, bounds, (rawFilename ?? '').replace(/^.*[\\/]/, ''))
      },
    },
  }
  return read
}

/**
 * Waits that end early, with STOPPED, once `stop` is called. Each wait registers its own listener
 * and removes it when its promise settles, so nothing outlives the chunk it waited for.
 */
function createStops() {
  const listeners = new Set<() => void>()
  return {
    wait<T>(promise: Promise<T>): Promise<T | typeof STOPPED> {
      return new Promise<T | typeof STOPPED>((resolve, reject) => {
        const stopped = () => resolve(STOPPED)
        listeners.add(stopped)
        promise.then(
          (value) => {
            listeners.delete(stopped)
            resolve(value)
          },
          (error: unknown) => {
            listeners.delete(stopped)
            reject(error)
          },
        )
      })
    },
    stop() {
      for (const stopped of listeners) stopped()
      listeners.clear()
    },
  }
}

/**
 * Starts storing a file part where `options.place` puts `filename` (a refusal fails the read), and
 * records it as written once the store has it whole, or fails the read with the store's error.
 */
function openFilePart(
  read: UploadRead,
  open: Set<FilePart>,
  options: UploadOptions,
  bounds: UploadBounds,
  filename: string,
): FilePart | undefined {
  let key: string
  try {
    key = options.place(filename).key
  } catch (error) {
    read.fail(asError(error))
    return undefined
  }
  const file = createFilePart(options.maxFileBytes, (seen) => read.fail(bounds.tooLarge(seen, true)))
  open.add(file)
  read.writes.push(
    options.files.write(key, file.stream).then(
      (size) => {
        open.delete(file)
        read.written.push({ filename, key, size })
        if (file.seen > options.maxFileBytes) read.fail(bounds.tooLarge(file.seen))
      },
      (error: unknown) => {
        open.delete(file)
        // The store's own failure (disk full, S3 down) keeps its error for renderError.
        read.fail(read.failed ?? asError(error))
      },
    ),
  )
  return file
}

const asError = (error: unknown) => (error instanceof Error ? error : new Error(String(error)))

/** A file part on its way to the store: a web stream the parser pushes into and the store reads. */
interface FilePart {
  readonly stream: ReadableStream<Uint8Array>
  /** Bytes of the part seen so far (stored or not). */
  readonly seen: number
  push(chunk: Uint8Array): void
  end(): void
  /** Errors the stream: the store's write rejects and removes what it had written. */
  cut(error: Error): void
  room(): Promise<void>
}

/**
 * Passes bytes through up to `limit` and stores nothing past it. The part is still read and counted
 * up to `countedPastLimit(limit)` more, so a file over the limit by up to that is reported with its
 * real size when it ends; past that the request is cut (`tooLarge`) at the part's next chunk after
 * the one that crossed the bound (one chunk more, to learn whether it ends there): the size reported
 * then is the declared one when the request has a length, else "over" what arrived until the cut.
 */
function createFilePart(limit: number, tooLarge: (seen: number) => void): FilePart {
  const slack = countedPastLimit(limit)
  let controller!: ReadableStreamDefaultController<Uint8Array>
  let finished = false
  let crossed = false
  let wake: (() => void) | undefined
  const wakeUp = () => {
    wake?.()
    wake = undefined
  }
  const stream = new ReadableStream<Uint8Array>(
    {
      start: (c) => void (controller = c),
      pull: wakeUp,
      // The store stopped reading (its write failed): its rejection fails the upload.
      cancel() {
        finished = true
        wakeUp()
      },
    },
    { highWaterMark: FILE_QUEUE_BYTES, size: (chunk) => chunk.byteLength },
  )
  const part = {
    stream,
    seen: 0,
    push(chunk: Uint8Array) {
      part.seen += chunk.byteLength
      if (part.seen > limit + slack) {
        // Cut when the part goes on past the chunk that crossed the bound: if it ends right there (a
        // body read in large chunks, as in-process), its size is known, and is reported as it is.
        if (crossed) return tooLarge(part.seen)
        crossed = true
      }
      if (!finished && part.seen <= limit) controller.enqueue(chunk)
    },
    end() {
      if (finished) return
      finished = true
      controller.close()
      wakeUp()
    },
    cut(error: Error) {
      if (finished) return
      finished = true
      controller.error(error)
      wakeUp()
    },
    room() {
      if (finished || (controller.desiredSize ?? 1) > 0) return Promise.resolve()
      return new Promise<void>((resolve) => (wake = resolve))
    },
  }
  return part
}

async function removeAll(files: FileStore, written: UploadedFile[]): Promise<void> {
  await Promise.allSettled(written.map((file) => files.remove(file.key)))
}
