/** A form part's name and file name, as its `Content-Disposition` header gives them. */
export interface FormDisposition {
  /** The part's `name`: '' when it has no `form-data` disposition (the part is ignored), undefined when a `form-data` part has none. */
  name: string | undefined
  filename: string | undefined
}

/**
 * Reads a form part's `Content-Disposition` (RFC 7578), given as text decoded from UTF-8; undefined
 * when it is malformed (an unterminated quote, a `filename*` that does not decode), and a name of
 * undefined when a `form-data` part has none.
 *
 * multipasta parses the header by RFC 7230's quoted-string, whose obs-text stops at U+00FF: a
 * `filename="牛.obj"` as browsers, curl and undici send it (raw UTF-8, which the WHATWG form
 * encoding and RFC 7578 §4.2 both allow) fails its whole parse, and the part lost its name and file
 * name ("missing required field: file"). Any character is taken here. `filename*=` (RFC 5987:
 * `charset'language'percent-encoded`, some clients send it) wins over `filename`, as RFC 6266 §4.3
 * has it for the same header on downloads.
 *
 * @example parseFormDisposition('form-data; name="file"; filename="牛.obj"') // { name: 'file', filename: '牛.obj' }
 */
export function parseFormDisposition(header: string | undefined): FormDisposition | undefined {
  if (header === undefined) return { name: '', filename: undefined }
  const params = parseParameters(header)
  if (!params) return undefined
  if (params.type !== 'form-data') return { name: '', filename: undefined }
  const extended = params.values.get('filename*')
  const filename = extended === undefined ? params.values.get('filename') : decodeExtendedValue(extended)
  if (extended !== undefined && filename === undefined) return undefined
  return { name: params.values.get('name'), filename }
}

/** `type; key=value; key="quoted value"` into the lower-case type and the parameters (first of each name). */
function parseParameters(header: string): { type: string; values: Map<string, string> } | undefined {
  const values = new Map<string, string>()
  let index = header.indexOf(';')
  const type = (index < 0 ? header : header.slice(0, index)).trim().toLowerCase()
  while (index >= 0 && index < header.length) {
    index++ // past ';'
    const equals = header.indexOf('=', index)
    if (equals < 0) return header.slice(index).trim() === '' ? { type, values } : undefined
    const key = header.slice(index, equals).trim().toLowerCase()
    let cursor = equals + 1
    while (header[cursor] === ' ' || header[cursor] === '\t') cursor++
    let value: string
    if (header[cursor] === '"') {
      const closing = closingQuote(header, cursor + 1)
      if (closing < 0) return undefined
      // Backslashes stay as sent, as multipasta leaves them: a Windows client's `C:\models\a.obj`
      // keeps its separators, and the caller strips the folders.
      value = header.slice(cursor + 1, closing)
      cursor = closing + 1
    } else {
      const end = header.indexOf(';', cursor)
      value = header.slice(cursor, end < 0 ? header.length : end).trim()
      cursor = end < 0 ? header.length : end
    }
    if (key && !values.has(key)) values.set(key, value)
    while (header[cursor] === ' ' || header[cursor] === '\t') cursor++
    if (cursor < header.length && header[cursor] !== ';') return undefined
    index = cursor
  }
  return { type, values }
}

/** The index of the quote that ends a quoted-string opened before `from` (a backslash escapes the next character), or -1. */
function closingQuote(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    if (text[i] === '\\') i++
    else if (text[i] === '"') return i
  }
  return -1
}

/** RFC 5987's ext-value (`UTF-8''%E7%89%9B.obj`, `iso-8859-1'de'k%FChe.obj`), or undefined when it does not decode. */
function decodeExtendedValue(value: string): string | undefined {
  const match = /^([^']*)'[^']*'(.*)$/.exec(value)
  if (!match) return undefined
  const charset = match[1]!.trim().toLowerCase()
  if (charset !== 'utf-8' && charset !== 'iso-8859-1') return undefined
  // Percent escapes are bytes; a character a client left unescaped is taken as its UTF-8 bytes
  // rather than refusing the upload. A '%' that starts no escape is malformed.
  const pieces = match[2]!.split(/(%[0-9a-fA-F]{2})/)
  if (pieces.some((piece, i) => i % 2 === 0 && piece.includes('%'))) return undefined
  const bytes = pieces.flatMap((piece, i) => (i % 2 === 1 ? [Number.parseInt(piece.slice(1), 16)] : [...new TextEncoder().encode(piece)]))
  try {
    return new TextDecoder(charset === 'utf-8' ? 'utf-8' : 'latin1', { fatal: true }).decode(Uint8Array.from(bytes))
  } catch {
    return undefined
  }
}
