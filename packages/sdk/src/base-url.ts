/**
 * Whether `baseURL` can be a Mos service's address: an absolute http:// or https:// URL. Checked
 * when a client is made, because a scheme-less `localhost:8080` parses as a URL of scheme
 * `localhost:`, and each of its requests would fail later with fetch's bare 'unknown scheme'.
 * @example isServiceAddress('localhost:8080') // false
 */
export function isServiceAddress(baseURL: string): boolean {
  try {
    const { protocol } = new URL(baseURL)
    return protocol === 'http:' || protocol === 'https:'
  } catch {
    return false
  }
}

/** What a refused address is told, after the name it was given under (`baseURL`, `--base-url`). */
export function serviceAddressProblem(baseURL: string): string {
  return `must be an http:// or https:// address such as http://localhost:8080, not "${baseURL}"`
}

/**
 * The address without trailing slashes or `/api/v1`, which the client adds to every path: an
 * address copied with it (as the contract's paths are written) would otherwise ask for /api/v1/api/v1/….
 * @example serviceRoot('http://mos:8080/api/v1/') // 'http://mos:8080'
 */
export function serviceRoot(baseURL: string): string {
  return baseURL.replace(/\/+$/, '').replace(/\/api\/v1$/, '')
}
