import { scryptAsync } from '@noble/hashes/scrypt.js'
import { equalInConstantTime, fromBase64Url, toBase64Url } from '../web-crypto.ts'

/**
 * scrypt's cost: 2^15 × 8 × 128 bytes = 32 MiB per sign-in, far too slow to guess at. scrypt runs in
 * JavaScript (noble's, audited), as Web Crypto has none and the API role stays off `node:crypto`.
 */
const DEFAULT_PARAMS = { N: 2 ** 15, r: 8, p: 1 }
const KEY_BYTES = 32
const SALT_BYTES = 16

interface ScryptHash {
  N: number
  r: number
  p: number
  salt: Uint8Array
  hash: Uint8Array
}

const BASE64URL = /^[A-Za-z0-9_-]+$/

/**
 * Reads `scrypt$<N>$<r>$<p>$<salt base64url>$<hash base64url>`; undefined when the text is not one.
 * The cost is bounded (N ≤ 2^20, r ≤ 32, p ≤ 16) so a setting cannot make each sign-in take a gigabyte.
 */
export function parsePasswordHash(text: string): ScryptHash | undefined {
  const parts = text.trim().split('$')
  if (parts.length !== 6 || parts[0] !== 'scrypt') return undefined
  const [N, r, p] = parts.slice(1, 4).map((part) => (/^\d{1,8}$/.test(part) ? Number(part) : Number.NaN)) as [number, number, number]
  const powerOfTwo = N >= 2 && (N & (N - 1)) === 0
  if (!powerOfTwo || N > 2 ** 20 || !(r >= 1 && r <= 32) || !(p >= 1 && p <= 16)) return undefined
  if (!BASE64URL.test(parts[4]!) || !BASE64URL.test(parts[5]!)) return undefined
  const salt = fromBase64Url(parts[4]!)
  const hash = fromBase64Url(parts[5]!)
  if (salt.length < 8 || hash.length < 16) return undefined
  return { N, r, p, salt, hash }
}

function derive(password: string, salt: Uint8Array, length: number, params: { N: number; r: number; p: number }): Promise<Uint8Array> {
  const { N, r, p } = params
  return scryptAsync(password.normalize('NFC'), salt, { N, r, p, dkLen: length, maxmem: 256 * N * r * p })
}

/** A new hash of `password` in the settings' form, with a fresh random salt. */
export async function hashPassword(password: string, params = DEFAULT_PARAMS): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES))
  const hash = await derive(password, salt, KEY_BYTES, params)
  return ['scrypt', params.N, params.r, params.p, toBase64Url(salt), toBase64Url(hash)].join('$')
}

/** Whether `password` matches `hash` (parsed by `parsePasswordHash`); the comparison takes the same time whatever differs. */
export async function verifyPassword(password: string, hash: ScryptHash): Promise<boolean> {
  const candidate = await derive(password, hash.salt, hash.hash.length, hash)
  return equalInConstantTime(candidate, hash.hash)
}

export type { ScryptHash }
