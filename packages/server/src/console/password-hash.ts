import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto'

/** scrypt's cost: 2^15 × 8 × 128 bytes = 32 MiB and ~0.1 s per sign-in, far too slow to guess at. */
const DEFAULT_PARAMS = { N: 2 ** 15, r: 8, p: 1 }
const KEY_BYTES = 32
const SALT_BYTES = 16

interface ScryptHash {
  N: number
  r: number
  p: number
  salt: Buffer
  hash: Buffer
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
  const salt = Buffer.from(parts[4]!, 'base64url')
  const hash = Buffer.from(parts[5]!, 'base64url')
  if (salt.length < 8 || hash.length < 16) return undefined
  return { N, r, p, salt, hash }
}

function derive(password: string, salt: Buffer, length: number, params: { N: number; r: number; p: number }): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, length, { ...params, maxmem: 256 * params.N * params.r * params.p }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  )
}

/** A new hash of `password` in the settings' form, with a fresh random salt. */
export async function hashPassword(password: string, params = DEFAULT_PARAMS): Promise<string> {
  const salt = randomBytes(SALT_BYTES)
  const hash = await derive(password, salt, KEY_BYTES, params)
  return ['scrypt', params.N, params.r, params.p, salt.toString('base64url'), hash.toString('base64url')].join('$')
}

/** Whether `password` matches `hash` (parsed by `parsePasswordHash`); the comparison takes the same time whatever differs. */
export async function verifyPassword(password: string, hash: ScryptHash): Promise<boolean> {
  const candidate = await derive(password, hash.salt, hash.hash.length, hash)
  return timingSafeEqual(candidate, hash.hash)
}

export type { ScryptHash }
