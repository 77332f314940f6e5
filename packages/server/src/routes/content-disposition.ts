/**
 * `Content-Disposition: attachment` naming `filename` (RFC 6266): an ASCII `filename="…"` for
 * clients that know only that form, and `filename*=UTF-8''…` (RFC 5987) with the exact name.
 * Header values are bytes; a raw "ü" would go out as Latin-1 0xFC, which no client reads as the
 * UTF-8 name and some reject. The fallback drops accents (ü → u) and replaces what is left outside
 * printable ASCII, quotes and backslashes with `_`.
 */
export function contentDisposition(filename: string): string {
  const ascii = filename
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7e]|["\\]/g, '_')
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeRfc5987(filename)}`
}

/** Percent-encodes everything outside RFC 5987's attr-char (encodeURIComponent leaves ' ( ) * as they are). */
function encodeRfc5987(value: string): string {
  return encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
}
