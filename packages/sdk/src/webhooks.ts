import { EXTENSION_HEADERS } from './contract/index.ts'

/** Options of `verifyWebhookSignature`. */
export interface VerifyWebhookOptions {
  /** How old (or how far ahead) the signature's time may be, in seconds; 300 by default. 0: any age. */
  tolerance?: number
  /** The current time in Unix seconds (tests); default now. */
  now?: number
}

export const WEBHOOK_DEFAULTS = { tolerance: 300 } as const

/** The header a webhook delivery's signature comes in (`Mos-Signature`). */
export const WEBHOOK_SIGNATURE_HEADER = EXTENSION_HEADERS.signature

/**
 * Whether a webhook delivery is Mos's: `header` is its `Mos-Signature` (`t=<unix seconds>,v1=<hex>`),
 * `body` the raw request body as received (bytes or text, before any JSON parsing), `secret` the
 * deployment's SERVICE__WEBHOOKS__SECRET. True when one `v1` is the HMAC-SHA256 of `"<t>.<body>"`
 * and `t` is within `tolerance` of now (a replayed old delivery fails). Web Crypto, so it runs in
 * Node 20+, browsers and edge runtimes; the comparison takes the same time wherever it differs.
 * @example
 * const ok = await verifyWebhookSignature(await request.text(), request.headers.get('Mos-Signature'), secret)
 * if (!ok) return new Response('bad signature', { status: 400 })
 */
export async function verifyWebhookSignature(
  body: string | Uint8Array,
  header: string | null | undefined,
  secret: string,
  options: VerifyWebhookOptions = {},
): Promise<boolean> {
  const parsed = parseSignatureHeader(header ?? '')
  if (!parsed || !secret) return false
  const tolerance = options.tolerance ?? WEBHOOK_DEFAULTS.tolerance
  const now = options.now ?? Math.floor(Date.now() / 1000)
  if (tolerance > 0 && Math.abs(now - parsed.timestamp) > tolerance) return false
  const encoder = new TextEncoder()
  const bodyBytes = typeof body === 'string' ? encoder.encode(body) : body
  const signed = concat(encoder.encode(`${parsed.timestamp}.`), bodyBytes)
  const key = await globalThis.crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  const expected = new Uint8Array(await globalThis.crypto.subtle.sign('HMAC', key, signed as Uint8Array<ArrayBuffer>))
  let matched = false
  for (const candidate of parsed.signatures) matched = constantTimeEqual(expected, candidate) || matched
  return matched
}

/** `t=…,v1=…[,v1=…]` → the time and every v1 signature (several while a secret is being rotated). */
function parseSignatureHeader(header: string): { timestamp: number; signatures: Uint8Array[] } | undefined {
  let timestamp: number | undefined
  const signatures: Uint8Array[] = []
  for (const part of header.split(',')) {
    const [name, value = ''] = part.trim().split('=', 2) as [string, string?]
    if (name === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value)
    else if (name === 'v1' && /^[0-9a-f]{64}$/i.test(value)) signatures.push(fromHex(value))
  }
  return timestamp !== undefined && signatures.length > 0 ? { timestamp, signatures } : undefined
}

function fromHex(hex: string): Uint8Array {
  const bytes = new Uint8Array(hex.length / 2)
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16)
  return bytes
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const joined = new Uint8Array(a.length + b.length)
  joined.set(a)
  joined.set(b, a.length)
  return joined
}

/** Compares every byte whatever the first difference (lengths are fixed: 32-byte digests). */
function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  let difference = 0
  for (let i = 0; i < a.length; i++) difference |= a[i]! ^ b[i]!
  return difference === 0
}
