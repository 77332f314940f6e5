/**
 * Digests and comparisons on Web Crypto (`crypto.subtle`), which every runtime the API role runs on
 * has (Node, Deno, Bun, workerd); `node:crypto` stays out of the API role's path (docs/architecture.md).
 */

const encoder = new TextEncoder()

/** SHA-256 of UTF-8 text or bytes. */
export async function sha256(input: string | Uint8Array): Promise<Uint8Array> {
  const bytes = typeof input === 'string' ? encoder.encode(input) : input
  return new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>))
}

/** SHA-256 of UTF-8 text or bytes, as lower-case hex. */
export async function sha256Hex(input: string | Uint8Array): Promise<string> {
  return toHex(await sha256(input))
}

/** Lower-case hex of `bytes`. */
export function toHex(bytes: Uint8Array): string {
  let hex = ''
  for (const byte of bytes) hex += byte.toString(16).padStart(2, '0')
  return hex
}

/**
 * Whether two byte arrays are equal, in a time that depends only on their length (digests of
 * secrets are compared with it, so a guesser learns nothing from how long a refusal took).
 */
export function equalInConstantTime(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false
  let difference = 0
  for (let i = 0; i < a.byteLength; i++) difference |= (a[i] as number) ^ (b[i] as number)
  return difference === 0
}

/** Standard base64 of `bytes` (`btoa` takes one character per byte): header values such as Content-MD5. */
export function toBase64(bytes: Uint8Array): string {
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary)
}

/** `bytes` in base64url without padding (RFC 4648 §5), as cookies and settings carry them. */
export function toBase64Url(bytes: Uint8Array): string {
  return toBase64(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}

/** The bytes of base64url text (padding optional); the caller checks the alphabet first. */
export function fromBase64Url(text: string): Uint8Array {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'))
  return Uint8Array.from(binary, (char) => char.charCodeAt(0))
}

/** `byteCount` random bytes from the platform's CSPRNG, as base64url: session cookies and tokens. */
export function randomToken(byteCount: number): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(byteCount)))
}
