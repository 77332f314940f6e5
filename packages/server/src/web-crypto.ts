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
