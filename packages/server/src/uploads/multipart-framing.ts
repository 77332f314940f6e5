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
  let state: 'preamble' | 'headers' | 'body' | 'done' | 'failed' = 'preamble'
  let boundaries = 0
  let parts = 0
  let sink: PartSink | undefined
  // Bytes after a boundary while fewer than the two that tell a closing `--` from a part's CRLF.
  let opening: Uint8Array | undefined
  const fail = (detail: string) => {
    state = 'failed'
    sink = undefined
    handlers.error(detail)
  }
  const readPartStart = (chunk: Uint8Array) => {
    if (opening) chunk = joinBytes([opening, chunk])
    opening = undefined
    if (chunk.length < 2) return void (opening = chunk)
    if (chunk[0] === DASH && chunk[1] === DASH) return void (state = 'done')
    if (++parts > maxParts) return fail(`more than ${maxParts} form parts`)
    state = 'headers'
    readPartHeaders(chunk, 2) // past the CRLF that ends the boundary line
  }
  const readPartHeaders = (chunk: Uint8Array, from: number) => {
    const result = readHeaders(chunk, from)
    if (result._tag === 'Continue') return
    if (result._tag === 'Failure') return fail('a form part has malformed headers')
    state = 'body'
    sink = handlers.part(result.headers)
    if (result.endPosition < chunk.length) sink?.push(chunk.subarray(result.endPosition))
  }
  const search = Search.make(`\r\n--${boundary}`, (index, chunk) => {
    if (state === 'done' || state === 'failed' || index === 0) return
    if (index !== boundaries) {
      boundaries = index
      sink?.end()
      sink = undefined
      if (state === 'headers') return fail('a form part has malformed headers')
      opening = undefined
      state = 'preamble'
    }
    if (state === 'preamble') readPartStart(chunk)
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
