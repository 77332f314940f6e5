import { ModelInputError } from '../errors.ts'

/** Bounds a reader checks against what a file declares, before it allocates anything for it. */
export interface ReadOptions {
  /**
   * Most bytes a reader may allocate for what an input declares (accessor count × element size,
   * PLY element counts, binary STL triangle count, zip contents). Inputs declaring more fail with a
   * ModelInputError before any allocation.
   */
  maxAllocationBytes?: number
}

/** 1 GiB: far above any real upload the service takes, far below a worker's heap and the machine. */
export const DEFAULT_MAX_ALLOCATION_BYTES = 1024 * 1024 * 1024

export const READ_DEFAULTS: Required<ReadOptions> = {
  maxAllocationBytes: DEFAULT_MAX_ALLOCATION_BYTES,
}

/** The allocation bound in force for these options. */
export function allocationLimit(options: ReadOptions = {}): number {
  const limit = options.maxAllocationBytes
  return typeof limit === 'number' && Number.isFinite(limit) && limit > 0 ? limit : DEFAULT_MAX_ALLOCATION_BYTES
}

/** Throws when `bytes` (what the input declares it needs) is past the bound. */
export function checkAllocation(bytes: number, what: string, options: ReadOptions = {}): void {
  const limit = allocationLimit(options)
  if (!(bytes <= limit)) {
    throw new ModelInputError(`${what} would need ${formatBytes(bytes)}, more than the ${formatBytes(limit)} limit`)
  }
}

function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return 'unbounded memory'
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(1)} GiB`
  if (bytes >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`
  return `${Math.round(bytes)} bytes`
}
