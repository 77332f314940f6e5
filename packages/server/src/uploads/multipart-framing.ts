import * as HeadersParser from 'multipasta/HeadersParser'
import * as Search from 'multipasta/Search'

/** A part's headers as sent: names lower-cased, a header given twice as an array. */
export type PartHeaders = Readonly<Record<string, string | string[]>>

/** Where a part's body goes: its chunks as they arrive, then `end` once its closing boundary is read. */
export interface PartSink {
  push(chunk: Uint8Array): void
  end(): void
}

/** Where the framing hands what it reads. */
export interface FramingHandlers {
  /** A part's headers are read: returns where its body goes, or undefined to drop it. */
  part(headers: PartHeaders): PartSink | undefined
  /** Why the body is refused (malformed, too many parts); the framing reads nothing more once it is called. */
  error(detail: string): void
}

/** A multipart body cut into parts, chunk by chunk. */
export interface MultipartFraming {
  write(chunk: Uint8Array): void
  /** The body ended: true when its closing boundary had been read. */
  end(): boolean
}

const CRLF = new TextEncoder().encode('\r\n')
const DASH = 0x2d
const CR = 0x0d
const LF = 0x0a
const SPACE = 0x20
const TAB = 0x09
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/
const MALFORMED_BOUNDARY_LINE = 'a form boundary is followed by neither "--" nor a line break'

/**
 * Cuts a multipart body (RFC 2046 §5.1) into parts on multipasta's boundary search and header
 * reader, and leaves what the headers mean to the caller. multipasta's own `make` reads each part's
 * Content-Disposition itself, and throws out of `write` for a `filename*=charset''…` whose escapes
 * are not UTF-8 (it decodes every such value with decodeURIComponent, whatever the charset): an
 * ISO-8859-1 file name, which RFC 8187 allows, ended the whole form as malformed.
 * The preamble before the first boundary and the epilogue after the closing one are ignored.
 *
 * @example createMultipartFraming('XyZ', 100, { part: (headers) => sinkFor(headers), error: refuse })
 */
export function createMultipartFraming(boundary: string, maxParts: number, handlers: FramingHandlers): MultipartFraming {
  const readHeaders = HeadersParser.make()
  let state: 'preamble' | 'line' | 'headers' | 'body' | 'done' | 'failed' = 'preamble'
  let boundaries = 0
  let parts = 0
  let sink: PartSink | undefined
  const fail = (detail: string) => {
    state = 'failed'
    sink = undefined
    handlers.error(detail)
  }
  const line = createBoundaryLineReader({
    closed: () => void (state = 'done'),
    opened(chunk, from) {
      if (++parts > maxParts) return fail(`more than ${maxParts} form parts`)
      state = 'headers'
      readPartHeaders(chunk, from)
    },
    malformed: () => fail(MALFORMED_BOUNDARY_LINE),
  })
  const readPartHeaders = (chunk: Uint8Array, from: number) => {
    const result = readHeaders(chunk, from)
    if (result._tag === 'Continue') return
    if (result._tag === 'Failure' || hasControlCharacters(result.headers)) return fail('a form part has malformed headers')
    state = 'body'
    sink = handlers.part(result.headers)
    if (result.endPosition < chunk.length) sink?.push(chunk.subarray(result.endPosition))
  }
  const search = Search.make(`\r\n--${boundary}`, (index, chunk) => {
    if (state === 'done' || state === 'failed' || index === 0) return
    if (index !== boundaries) {
      // A boundary with nothing after it before the next one lacks its line break: the next
      // boundary's own CRLF is not the line's (a part has at least the blank line ending its headers).
      const skipped = index > boundaries + 1
      boundaries = index
      sink?.end()
      sink = undefined
      if (state === 'headers') return fail('a form part has malformed headers')
      if (state === 'line' || skipped) return fail(MALFORMED_BOUNDARY_LINE)
      state = 'line'
      line.start()
    }
    if (state === 'line') line.read(chunk)
    else if (state === 'headers') readPartHeaders(chunk, 0)
    else sink?.push(chunk)
  })
  // The first boundary has no line break before it; the search looks for one.
  search.write(CRLF)
  return {
    write(chunk) {
      if (state !== 'done' && state !== 'failed') search.write(chunk)
    },
    end() {
      if (state !== 'done' && state !== 'failed') search.end()
      return state === 'done'
    },
  }
}

/** What follows a boundary, as the boundary line reader finds it. */
interface BoundaryLineHandlers {
  /** `--`: the closing boundary. */
  closed(): void
  /** The line break: a part's headers begin at `chunk[from]`. */
  opened(chunk: Uint8Array, from: number): void
  /** Anything else. */
  malformed(): void
}

/**
 * Reads what follows a boundary, byte by byte across chunks: `--` (the closing boundary), or
 * transport padding (spaces and tabs, RFC 2046 §5.1.1) and the CRLF that ends the boundary line.
 * Anything else is malformed: skipping two bytes unread, as the framing first did, took
 * `--XyZXYContent-Disposition: …` or a lone LF as a part, and refused padding that the RFC allows.
 */
function createBoundaryLineReader(handlers: BoundaryLineHandlers) {
  let seen: 'nothing' | 'dash' | 'padding' | 'cr' = 'nothing'
  return {
    start: () => void (seen = 'nothing'),
    read(chunk: Uint8Array): void {
      for (let i = 0; i < chunk.length; i++) {
        const byte = chunk[i]
        if (seen === 'dash') return byte === DASH ? handlers.closed() : handlers.malformed()
        if (seen === 'cr') return byte === LF ? handlers.opened(chunk, i + 1) : handlers.malformed()
        if (byte === DASH && seen === 'nothing') seen = 'dash'
        else if (byte === CR) seen = 'cr'
        else if (byte === SPACE || byte === TAB) seen = 'padding'
        else return handlers.malformed()
      }
    },
  }
}

/**
 * Whether a header value holds a control character (HTAB aside). multipasta's reader refuses them,
 * but after a bare CR it takes the next byte unchecked as it looks for the LF: `a\r\0b.obj` came
 * through as a file name.
 */
function hasControlCharacters(headers: PartHeaders): boolean {
  return Object.values(headers).some((value) => (typeof value === 'string' ? [value] : value).some((text) => CONTROL.test(text)))
}

/** The chunks as one array (a part's pieces, a field's value). */
export function joinBytes(chunks: readonly Uint8Array[]): Uint8Array {
  const joined = new Uint8Array(chunks.reduce((total, chunk) => total + chunk.length, 0))
  let offset = 0
  for (const chunk of chunks) {
    joined.set(chunk, offset)
    offset += chunk.length
  }
  return joined
}
