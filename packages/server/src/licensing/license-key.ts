import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto'
import { LICENSED_TIERS, type LicensedTier, type TierLimits } from '@mos/sdk/contract'

/**
 * Licence keys: `mos1.<payload>.<signature>`, both parts base64url. The payload is JSON; the
 * signature is Ed25519 over the ASCII text `mos1.<payload>`, made offline with the vendor's private
 * key. Changing one character of the payload breaks the signature, so tier, expiry, limits and the
 * machine binding cannot be edited by whoever holds the key.
 */
export const LICENSE_KEY_PREFIX = 'mos1'

export interface LicensePayload {
  /** Key identifier, for the vendor's books. */
  id: string
  tier: LicensedTier
  /** Unix seconds. */
  issued_at: number
  /** Unix seconds. */
  expires_at: number
  customer?: string
  /** Limits that differ from the tier's table (a custom deal, or tests). */
  limits?: Partial<TierLimits>
  /** Machine id this key runs on (`mos license machine-id`); absent = any machine. */
  machine?: string
}

export type LicenseRefusal = 'malformed' | 'signature' | 'expired' | 'machine'

export type LicenseCheck =
  | { ok: true; payload: LicensePayload }
  /** `payload` is set when the key was genuine but expired or bound elsewhere. */
  | { ok: false; reason: LicenseRefusal; message: string; payload?: LicensePayload }

/** Signs a payload into a licence key with the vendor's Ed25519 private key (PEM or KeyObject). */
export function issueLicenseKey(privateKey: string | KeyObject, payload: LicensePayload): string {
  const key = typeof privateKey === 'string' ? createPrivateKey(privateKey) : privateKey
  const body = `${LICENSE_KEY_PREFIX}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`
  return `${body}.${sign(null, Buffer.from(body), key).toString('base64url')}`
}

/**
 * Reads a public key given as PEM, or as base64 of its SPKI DER (one line, for an environment
 * variable). Throws on anything else, or on a key that is not Ed25519.
 */
export function parsePublicKey(text: string): KeyObject {
  const trimmed = text.trim()
  const key = trimmed.includes('-----BEGIN')
    ? createPublicKey(trimmed)
    : createPublicKey({ key: Buffer.from(trimmed, 'base64'), format: 'der', type: 'spki' })
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`expected an Ed25519 public key, got ${key.asymmetricKeyType}`)
  return key
}

/**
 * Checks a licence key: format, signature, then expiry and machine binding. Never throws; a key is
 * only `ok` when every check passes.
 */
export function checkLicenseKey(
  publicKey: KeyObject,
  key: string,
  context: { machineId: string; now?: number; verified?: Set<string> },
): LicenseCheck {
  const parts = key.trim().split('.')
  const malformed = (message: string): LicenseCheck => ({ ok: false, reason: 'malformed', message })
  if (parts.length !== 3 || parts[0] !== LICENSE_KEY_PREFIX || !parts[1] || !parts[2]) {
    return malformed('not a Mos licence key')
  }
  const [, body] = parts as [string, string, string]
  if (!signatureMatches(publicKey, key.trim(), context.verified))
    return { ok: false, reason: 'signature', message: 'signature does not match (tampered key or another vendor key)' }
  const payload = readPayload(body)
  if (!payload) return malformed('payload is not a valid licence')
  const now = context.now ?? Date.now()
  if (payload.expires_at * 1000 <= now) {
    return { ok: false, reason: 'expired', message: `expired at ${new Date(payload.expires_at * 1000).toISOString()}`, payload }
  }
  if (payload.machine && payload.machine !== context.machineId) {
    return { ok: false, reason: 'machine', message: `bound to machine ${payload.machine}, this machine is ${context.machineId}`, payload }
  }
  return { ok: true, payload }
}

/**
 * Whether the key's signature is the vendor's. `verified` remembers the keys that passed (for one
 * public key): the active licence is checked on every request (limits, admission), and an Ed25519
 * verification costs ~0.5 ms of the event loop. Only genuine keys are kept, so the set grows only
 * with keys the vendor signed, not with what clients send.
 */
function signatureMatches(publicKey: KeyObject, key: string, verified?: Set<string>): boolean {
  if (verified?.has(key)) return true
  const cut = key.lastIndexOf('.')
  const signatureBytes = Buffer.from(key.slice(cut + 1), 'base64url')
  let genuine = false
  try {
    genuine = signatureBytes.length === 64 && verify(null, Buffer.from(key.slice(0, cut)), publicKey, signatureBytes)
  } catch {
    genuine = false
  }
  if (genuine) verified?.add(key)
  return genuine
}

/** The payload if it is signed JSON of the right shape; a vendor bug must not crash the server. */
function readPayload(body: string): LicensePayload | undefined {
  let value: unknown
  try {
    value = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'))
  } catch {
    return undefined
  }
  if (typeof value !== 'object' || value === null) return undefined
  const p = value as Record<string, unknown>
  const isInt = (v: unknown) => Number.isInteger(v)
  if (typeof p.id !== 'string' || !LICENSED_TIERS.includes(p.tier as LicensedTier)) return undefined
  if (!isInt(p.issued_at) || !isInt(p.expires_at)) return undefined
  if (p.machine !== undefined && typeof p.machine !== 'string') return undefined
  if (p.limits !== undefined) {
    if (typeof p.limits !== 'object' || p.limits === null) return undefined
    for (const v of Object.values(p.limits)) if (!isInt(v) || (v as number) < -1) return undefined
  }
  return p as unknown as LicensePayload
}
