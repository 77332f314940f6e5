import * as Multipasta from 'multipasta'
import { parseFormDisposition } from './form-disposition.ts'

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
 * multipart/form-data on multipasta, a maintained streaming parser that needs nothing but web
 * globals (it runs on every runtime): file parts stream through as they arrive, fields are
 * bounded by size and count, parts by count. As busboy, a part is a file when it has a filename
 * or is `application/octet-stream`; file names are as sent (the caller strips folders). Each part's
 * name and file name are read from its Content-Disposition by form-disposition.ts, not taken from
 * multipasta, which loses both for a file name with a character above U+00FF.
 * `@remix-run/multipart-parser` (formerly `@mjackson/`) was not taken: it keeps each part whole
 * in memory until its boundary arrives, and a file part may be hundreds of MB.
 */
export function createFormParser(contentType: string, handlers: FormHandlers): FormParser {
  let refused: string | undefined
  let done = false
  let fields = 0
  let current = ''
  // Each part's disposition as read at its headers, for its field value or its file at the end.
  const dispositions = new WeakMap<Multipasta.PartInfo, { name: string; filename: string | undefined }>()
  const refuse = (detail: string) => void (refused ??= detail)
  const parser = Multipasta.make({
    headers: { 'content-type': contentType },
    maxParts: MAX_PARTS,
    maxFieldSize: MAX_FIELD_BYTES,
    // Called at every part's headers: the part's name is known from here on (the field-size error names it).
    isFile(info) {
      const header = info.headers['content-disposition']
      // Two Content-Disposition headers on one part name it twice: malformed, as one that does not parse.
      const disposition = typeof header === 'object' ? undefined : parseFormDisposition(header)
      if (!disposition) refuse('a form part has malformed headers')
      else if (disposition.name === undefined) refuse('a form part has no name')
      const part = { name: disposition?.name ?? '', filename: disposition?.filename }
      dispositions.set(info, part)
      current = part.name
      // As multipasta's defaultIsFile, on the file name read here.
      const isFile = part.filename !== undefined || info.contentType === 'application/octet-stream'
      if (!isFile && ++fields > MAX_FIELDS) refuse(`more than ${MAX_FIELDS} form fields`)
      return isFile
    },
    onField(info, value) {
      const name = dispositions.get(info)?.name ?? info.name
      if (refused === undefined) handlers.field(name, Multipasta.decodeField(info, value))
    },
    onFile(info) {
      const part = dispositions.get(info) ?? { name: info.name, filename: info.filename }
      const sink = refused === undefined ? handlers.file(part.name, part.filename) : undefined
      if (!sink) return () => undefined
      return (chunk) => (chunk === null ? sink.end() : sink.push(chunk))
    },
    onError(error) {
      refuse(refusalOf(error, current))
    },
    onDone() {
      done = true
    },
  })
  return {
    write(chunk) {
      if (refused === undefined) {
        try {
          parser.write(chunk)
        } catch {
          // A header the parser cannot decode (a bad percent escape in `filename*`).
          refuse('a form part has malformed headers')
        }
      }
      return refused
    },
    end() {
      if (refused === undefined) parser.end()
      if (refused === undefined && !done) refuse('the form ended before its closing boundary')
      return refused
    },
  }
}

function refusalOf(error: Multipasta.MultipartError, partName: string): string {
  switch (error._tag) {
    case 'InvalidBoundary':
      return 'multipart/form-data without a boundary'
    case 'BadHeaders':
      return 'a form part has malformed headers'
    case 'InvalidDisposition':
      return 'a form part has no name'
    case 'EndNotReached':
      return 'the form ended before its closing boundary'
    case 'ReachedLimit':
      if (error.limit === 'MaxFieldSize') return `form field ${partName} is longer than ${MAX_FIELD_BYTES} bytes`
      if (error.limit === 'MaxParts') return `more than ${MAX_PARTS} form parts`
      return 'the form is larger than allowed'
  }
}
