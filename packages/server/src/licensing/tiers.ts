import type { LicenseTier, TierLimits } from '@mos/sdk/contract'

/**
 * The one table of tiers and their limits (docs/licensing.md shows it). -1 = unlimited. The trial's
 * file count is a separate setting (`SERVICE__LICENSE__TRIAL_MAX_FILES`), counted across restarts.
 */
export const TIER_LIMITS: Record<LicenseTier, TierLimits> = {
  trial: { max_file_size_mb: 50, max_batch_count: 5, max_texture_size_mb: 8 },
  standard: { max_file_size_mb: 500, max_batch_count: 50, max_texture_size_mb: 64 },
  professional: { max_file_size_mb: 2048, max_batch_count: -1, max_texture_size_mb: -1 },
}

/** The built-in trial file count, the most `SERVICE__LICENSE__TRIAL_MAX_FILES` may be set to. */
export const TRIAL_MAX_FILES = 100
