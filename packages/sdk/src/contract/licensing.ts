import type { Variant } from './vocabulary.ts'

/**
 * The licence vocabulary shared by the server, the SDK and the conformance suite: tier names per
 * variant and the limits a tier carries. `-1` in a limit means unlimited (2.7).
 */

/** Tier names of variant A, in ascending order; variant B numbers them 0, 1, 2. */
export const LICENSE_TIERS = ['trial', 'standard', 'professional'] as const
export type LicenseTier = (typeof LICENSE_TIERS)[number]

/** Licensed tiers only (what a key may carry). */
export const LICENSED_TIERS = ['standard', 'professional'] as const satisfies readonly LicenseTier[]
export type LicensedTier = (typeof LICENSED_TIERS)[number]

/** Variant B's tier number: 0 = not licensed (trial limits), 1 and 2 the licensed tiers. */
export const TIER_NUMBER: Record<LicenseTier, 0 | 1 | 2> = { trial: 0, standard: 1, professional: 2 }

/** The limits a tier grants, in the wire names of 2.7; -1 = unlimited. */
export interface TierLimits {
  max_file_size_mb: number
  max_batch_count: number
  max_texture_size_mb: number
}

/** `mode` of the variant A info document. */
export const LICENSE_MODES = ['trial', 'licensed'] as const
export type LicenseMode = (typeof LICENSE_MODES)[number]

/** `status` of the licence: no key, a valid key, or a key past its expiry (trial limits apply again). */
export const LICENSE_STATUSES = ['trial', 'active', 'expired'] as const
export type LicenseStatus = (typeof LICENSE_STATUSES)[number]

/** The tier as the variant names it: a string in A, a number in B. */
export function tierLabel(variant: Variant, tier: LicenseTier): string | number {
  return variant === 'A' ? tier : TIER_NUMBER[tier]
}
