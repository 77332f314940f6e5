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
 * Turns a tier's limits into the limits the routes apply. The operator's own size cap still holds
 * under an unlimited or larger tier: the licence grants, the deployment may restrict further.
 */
export function activeLimits(tier: TierLimits, config: Pick<Config['limits'], 'maxFileSizeMb'>): ActiveLimits {
  const cap = config.maxFileSizeMb * MB
  return {
    maxFileBytes: unlimited(tier.max_file_size_mb) ? cap : Math.min(cap, tier.max_file_size_mb * MB),
    maxBatchCount: unlimited(tier.max_batch_count) ? Infinity : tier.max_batch_count,
    maxTextureBytes: unlimited(tier.max_texture_size_mb) ? cap : Math.min(cap, tier.max_texture_size_mb * MB),
  }
}
