import { TIER_NUMBER, type LicenseInfoA, type LicenseInfoB, type LicenseVerifyA, type LicenseVerifyB } from '@mos/sdk/contract'
import type { LicenseCheck } from './license-key.ts'
import type { Licensing } from './licensing.ts'
import { TIER_LIMITS } from './tiers.ts'
import type { Config } from '../config/schema.ts'
import { cappedTierLimits } from '../limits/active-limits.ts'

/** The operator's size cap, which the documents' limits include as the routes enforce it. */
type SizeCap = Pick<Config['limits'], 'maxFileSizeMb'>

/** Times for "no licence": the Unix epoch (documented), since the A shape requires a timestamp. */
const NO_EXPIRY = 0
const DAY_MS = 86_400_000

const iso = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString()

/** Shows only the key's last 6 characters (A `license_key`). */
function maskLicenseKey(key: string | undefined): string {
  return key ? `${'*'.repeat(8)}${key.slice(-6)}` : ''
}

/** The A verify document: `valid` only for a genuine, current key for this machine. */
export function verifyDocumentA(check: LicenseCheck, cap: SizeCap): LicenseVerifyA & { message: string } {
  if (check.ok) {
    const limits = cappedTierLimits({ ...TIER_LIMITS[check.payload.tier], ...check.payload.limits }, cap)
    return {
      valid: true,
      tier: check.payload.tier,
      expires_at: iso(check.payload.expires_at),
      limits: { max_file_size_mb: limits.max_file_size_mb, max_batch_count: limits.max_batch_count },
      message: 'license key is valid',
    }
  }
  // A refused key grants nothing: the trial tier and its limits are what would apply.
  return {
    valid: false,
    tier: 'trial',
    expires_at: iso(check.payload?.expires_at ?? NO_EXPIRY),
    limits: {
      max_file_size_mb: cappedTierLimits(TIER_LIMITS.trial, cap).max_file_size_mb,
      max_batch_count: TIER_LIMITS.trial.max_batch_count,
    },
    message: `license key refused: ${check.message}`,
  }
}

/** The B verify document; the caller answers 402 when `success` is false. */
export function verifyDocumentB(check: LicenseCheck): LicenseVerifyB {
  if (check.ok) {
    return {
      success: true,
      message: `license key is valid (tier ${TIER_NUMBER[check.payload.tier]})`,
      expires_at: check.payload.expires_at,
    }
  }
  return { success: false, message: `license key refused: ${check.message}`, expires_at: check.payload?.expires_at ?? NO_EXPIRY }
}

/** The A info document of the licence in force. */
export async function infoDocumentA(licensing: Licensing, cap: SizeCap): Promise<LicenseInfoA & { status: string; message: string }> {
  const state = licensing.state()
  return {
    mode: state.status === 'active' ? 'licensed' : 'trial',
    tier: state.tier,
    license_key: maskLicenseKey(state.key),
    expires_at: iso(state.payload?.expires_at ?? NO_EXPIRY),
    trial: { enabled: state.status !== 'active', used_files: await licensing.trial.used(), max_files: licensing.trialMaxFiles },
    limits: cappedTierLimits(state.limits, cap),
    status: state.status,
    message: state.message,
  }
}

/** The B info document of the licence in force. */
export async function infoDocumentB(
  licensing: Licensing,
  now = Date.now(),
): Promise<LicenseInfoB & { message: string; trial: { used_files: number; max_files: number } }> {
  const state = licensing.state()
  const expires = state.payload?.expires_at
  return {
    authorized: state.status === 'active',
    server_fingerprint: licensing.fingerprint,
    status: state.status,
    license_expires_at: expires ?? NO_EXPIRY,
    tier: TIER_NUMBER[state.tier],
    // Whole days left (rounded towards zero); negative once expired; 0 without a licence.
    days_until_expiry: expires === undefined ? 0 : Math.trunc((expires * 1000 - now) / DAY_MS),
    machine_id: licensing.machineId,
    message: state.message,
    trial: { used_files: await licensing.trial.used(), max_files: licensing.trialMaxFiles },
  }
}

/**
 * The console's licence document (GET /admin/license): the variant's info document, with the expiry
 * `null` where no key is in force. The API's document must carry a time there (the contract's shapes:
 * A an ISO string, B integers), so it says the epoch, 0 and 0 days, which the console showed as
 * "expires at 1970-01-01": a trial without a key expires never, and the console, outside the
 * contract, says so. A key in force, current or expired, keeps its own expiry.
 */
export async function adminLicenseDocument(licensing: Licensing, variant: 'A' | 'B', cap: SizeCap): Promise<Record<string, unknown>> {
  const keyed = licensing.state().payload !== undefined
  if (variant === 'A') {
    const document = await infoDocumentA(licensing, cap)
    return keyed ? document : { ...document, expires_at: null }
  }
  const document = await infoDocumentB(licensing)
  return keyed ? document : { ...document, license_expires_at: null, days_until_expiry: null }
}
