/** A header's value and parameters: `type; key=value; key="quoted value"`. */
export interface HeaderParameters {
  /** The value before the first `;`, lower-cased (`form-data`, `multipart/form-data`). */
  type: string
  /** Each parameter by its lower-cased name; the first of a name given twice. */
  values: Map<string, string>
}

/**
 * Reads a parameterised header (Content-Disposition, Content-Type) as text, undefined when it is
 * malformed (an unterminated quote, text between parameters). Unlike RFC 7230's quoted-string, any
 * character is taken inside quotes: browsers, curl and undici send file names as raw UTF-8.
 *
 * @example parseHeaderParameters('form-data; name="file"; filename="牛.obj"') // { type: 'form-data', values: Map { name → file, filename → 牛.obj } }
 */
export function parseHeaderParameters(header: string): HeaderParameters | undefined {
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
      // Backslashes stay as sent: a Windows client's `C:\models\a.obj` keeps its separators, and
      // the caller strips the folders.
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
