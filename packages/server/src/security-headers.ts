/**
 * Sent on every answer, the app's (http-policy.ts) and the ones a listener gives itself before or
 * instead of the app (a 400 for bytes that are no request, a 408, 414, 431, the shutdown grace's
 * 503): the API answers JSON and files, never a page, so nothing it sends may run scripts, be
 * framed, or be sniffed into something else; a download is not embeddable by other sites unless
 * CORS is on (then the operator chose to share it).
 *
 * ```ts
 * const headers = securityHeaders({ cors: config.server.corsOrigins.length > 0 })
 * ```
 */
export function securityHeaders(options: { cors: boolean }): Readonly<Record<string, string>> {
  return {
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'; sandbox",
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Resource-Policy': options.cors ? 'cross-origin' : 'same-origin',
  }
}

/** `headers` as header lines of a response written on the raw socket, each ending in CRLF. */
export function headerLines(headers: Readonly<Record<string, string>>): string {
  return Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')
}
