import type { TierLimits } from '@mos/sdk/contract'
import type { Config } from '../config/schema.ts'

const MB = 1024 * 1024

/** Limits in force for the next request, in bytes and counts; Infinity = unlimited. */
export interface ActiveLimits {
  /** Largest upload: the tier's limit, capped by `SERVICE__LIMITS__MAX_FILE_SIZE_MB`. */
  maxFileBytes: number
  /** Most files in one batch. */
  maxBatchCount: number
  /** Largest texture input (texture routes). */
  maxTextureBytes: number
}

const unlimited = (value: number) => value < 0

/**
 * A tier's limits with the operator's own size cap (`SERVICE__LIMITS__MAX_FILE_SIZE_MB`) applied: the
 * licence grants, the deployment may restrict further, under an unlimited or larger tier too. What
 * the routes enforce and what the licence documents say are both these.
 */
export function cappedTierLimits(tier: TierLimits, config: Pick<Config['limits'], 'maxFileSizeMb'>): TierLimits {
  const cap = (mb: number) => (unlimited(mb) ? config.maxFileSizeMb : Math.min(config.maxFileSizeMb, mb))
  return { ...tier, max_file_size_mb: cap(tier.max_file_size_mb), max_texture_size_mb: cap(tier.max_texture_size_mb) }
}

/** Turns a tier's limits into the limits the routes apply, capped as {@link cappedTierLimits} says. */
export function activeLimits(tier: TierLimits, config: Pick<Config['limits'], 'maxFileSizeMb'>): ActiveLimits {
  const capped = cappedTierLimits(tier, config)
  return {
    maxFileBytes: capped.max_file_size_mb * MB,
    maxBatchCount: unlimited(capped.max_batch_count) ? Infinity : capped.max_batch_count,
    maxTextureBytes: capped.max_texture_size_mb * MB,
  }
}
