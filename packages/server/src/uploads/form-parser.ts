import { parseFormDisposition } from './form-disposition.ts'
import { parseHeaderParameters } from './header-parameters.ts'
import { createMultipartFraming, joinBytes, type PartSink } from './multipart-framing.ts'

/** Form fields are options (numbers, names): 64 KB is far above any real one. */
export const MAX_FIELD_BYTES = 64 * 1024
export const MAX_FIELDS = 100
export const MAX_PARTS = 10_000

/** Where the parser hands a form's parts. */
export interface FormHandlers {
  field(name: string, value: string): void
  /** A file part begins: returns where its bytes go (`end` once it is whole), or undefined to drop them. */
  file(name: string, filename: string | undefined): { push(chunk: Uint8Array): void; end(): void } | undefined
}

/** A streaming multipart/form-data parser: bytes in, parts out as they arrive. */
export interface FormParser {
  /** Parses a chunk of the body; returns why the form is refused (malformed, over a bound), else undefined. */
  write(chunk: Uint8Array): string | undefined
  /** The body ended; returns why the form is refused (it did not end with its closing boundary), else undefined. */
  end(): string | undefined
}

/**
 * multipart/form-data, streaming and on web globals only (it runs on every runtime): file parts
 * stream through as they arrive, fields are bounded by size and count, parts by count. As busboy, a
 * part is a file when it has a filename or is `application/octet-stream`; file names are as sent
 * (the caller strips folders). multipart-framing.ts cuts the body into parts (on multipasta's
 * boundary search); each part's name and file name are read from its Content-Disposition by
 * form-disposition.ts alone.
 * `@remix-run/multipart-parser` (formerly `@mjackson/`) was not taken: it keeps each part whole
 * in memory until its boundary arrives, and a file part may be hundreds of MB.
 */
export function createFormParser(contentType: string, handlers: FormHandlers): FormParser {
  let refused: string | undefined
  let fields = 0
  const refuse = (detail: string) => void (refused ??= detail)
  const boundary = formBoundary(contentType)
  if ('refused' in boundary) refuse(boundary.refused)
  const framing = createMultipartFraming('boundary' in boundary ? boundary.boundary : '-', MAX_PARTS, {
    part(headers) {
      const header = headers['content-disposition']
      // Two Content-Disposition headers on one part name it twice: malformed, as one that does not parse.
      const disposition = typeof header === 'object' ? undefined : parseFormDisposition(header)
      if (!disposition) refuse('a form part has malformed headers')
      else if (disposition.name === undefined) refuse('a form part has no name')
      const name = disposition?.name ?? ''
      // No form-data disposition, or an empty name: no field of ours, so ignored (its bytes dropped,
      // counted as a part). Handed over as a field named '', a second such part was refused as
      // "invalid value for : given more than once".
      if (name === '') return undefined
      const filename = disposition?.filename
      const type = parseHeaderParameters(String(headers['content-type'] ?? ''))
      // As multipasta's and busboy's defaultIsFile.
      if (filename !== undefined || type?.type === 'application/octet-stream') {
        return refused === undefined ? handlers.file(name, filename) : undefined
      }
      if (++fields > MAX_FIELDS) refuse(`more than ${MAX_FIELDS} form fields`)
      return refused === undefined ? fieldSink(name, type?.values.get('charset')) : undefined
    },
    error: refuse,
  })
  /** Collects a field's value up to MAX_FIELD_BYTES and hands it over decoded once it is whole. */
  const fieldSink = (name: string, charset: string | undefined): PartSink => {
    const chunks: Uint8Array[] = []
    let size = 0
    return {
      push(chunk) {
        size += chunk.length
        if (size > MAX_FIELD_BYTES) refuse(`form field ${name} is longer than ${MAX_FIELD_BYTES} bytes`)
        else chunks.push(chunk)
      },
      end() {
        if (refused === undefined) handlers.field(name, decoderFor(charset).decode(joinBytes(chunks)))
      },
    }
  }
  return {
    write(chunk) {
      if (refused === undefined) framing.write(chunk)
      return refused
    },
    end() {
      if (refused === undefined && !framing.end()) refuse('the form ended before its closing boundary')
      return refused
    },
  }
}

/**
 * The boundary a multipart Content-Type names, or why it names none that a body can use. RFC 2046
 * §5.1.1 allows only ASCII in a boundary; one with other characters (a header's bytes past 0x7F
 * reach us as Latin-1 characters) can never match the body's bytes, and was refused only at the
 * body's end as "the form ended before its closing boundary", which sent the client looking at its body.
 */
export function formBoundary(contentType: string): { boundary: string } | { refused: string } {
  const boundary = parseHeaderParameters(contentType)?.values.get('boundary')
  if (!boundary) return { refused: 'multipart/form-data without a boundary' }
  if (!/^[\x20-\x7e]+$/.test(boundary)) {
    return { refused: 'the multipart/form-data boundary may hold only printable ASCII characters (RFC 2046)' }
  }
  return { boundary }
}

/** A field's text decoder: the charset its part names, UTF-8 when it names none or one unknown (as multipasta's decodeField). */
function decoderFor(charset: string | undefined): TextDecoder {
  try {
    return new TextDecoder(charset ?? 'utf-8')
  } catch {
    return new TextDecoder('utf-8')
  }
}
