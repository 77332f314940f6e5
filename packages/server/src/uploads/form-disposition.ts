import { parseHeaderParameters } from './header-parameters.ts'

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
 * A parser of RFC 7230's quoted-string (multipasta's) stops at U+00FF: a `filename="牛.obj"` as
 * browsers, curl and undici send it (raw UTF-8, which the WHATWG form encoding and RFC 7578 §4.2 both
 * allow) failed its whole parse, and the part lost its name and file name ("missing required field:
 * file"). Any character is taken here. `filename*=` (RFC 8187: `charset'[language]'percent-encoded`
 * in UTF-8 or ISO-8859-1, some clients send it) wins over `filename`, as RFC 6266 §4.3 has it for
 * the same header on downloads.
 *
 * @example parseFormDisposition('form-data; name="file"; filename="牛.obj"') // { name: 'file', filename: '牛.obj' }
 */
export function parseFormDisposition(header: string | undefined): FormDisposition | undefined {
  if (header === undefined) return { name: '', filename: undefined }
  const params = parseHeaderParameters(header)
  if (!params) return undefined
  if (params.type !== 'form-data') return { name: '', filename: undefined }
  const extended = params.values.get('filename*')
  const filename = extended === undefined ? params.values.get('filename') : decodeExtendedValue(extended)
  if (extended !== undefined && filename === undefined) return undefined
  return { name: params.values.get('name'), filename }
}

/**
 * RFC 8187's ext-value, `charset'[language]'value-chars` (`UTF-8''%E7%89%9B.obj`,
 * `iso-8859-1'de'k%FChe.obj`), or undefined when it does not decode: a charset other than the two
 * the RFC names (any case), a '%' that starts no escape, bytes that are not UTF-8 in UTF-8.
 */
function decodeExtendedValue(value: string): string | undefined {
  const match = /^([^']*)'[^']*'(.*)$/.exec(value)
  if (!match) return undefined
  const charset = match[1]!.trim().toLowerCase()
  const decode = charset === 'utf-8' ? decodeUtf8 : charset === 'iso-8859-1' ? decodeLatin1 : undefined
  if (!decode) return undefined
  // Percent escapes are bytes; a character a client left unescaped is taken as itself (its bytes
  // in the charset) rather than refusing the upload.
  const pieces = match[2]!.split(/(%[0-9a-fA-F]{2})/)
  if (pieces.some((piece, i) => i % 2 === 0 && piece.includes('%'))) return undefined
  const bytes: number[] = []
  for (const [i, piece] of pieces.entries()) {
    if (i % 2 === 1) bytes.push(Number.parseInt(piece.slice(1), 16))
    else if (charset === 'utf-8') bytes.push(...new TextEncoder().encode(piece))
    else for (const char of piece) bytes.push(char.codePointAt(0)!)
  }
  return decode(bytes)
}

function decodeUtf8(bytes: number[]): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes))
  } catch {
    return undefined
  }
}

/**
 * ISO-8859-1 by hand, each byte the code point of its value: TextDecoder's 'iso-8859-1' is the WHATWG
 * label of windows-1252 (0x80 is €), which Node decodes as one or the other by version.
 */
function decodeLatin1(bytes: number[]): string | undefined {
  // An unescaped character above U+00FF has no ISO-8859-1 byte.
  if (bytes.some((byte) => byte > 0xff)) return undefined
  return String.fromCharCode(...bytes)
}
