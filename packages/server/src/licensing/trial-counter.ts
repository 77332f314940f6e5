import type { Storage } from 'unstorage'

/** The trial's processed-file count, kept in record storage so a restart does not reset it. */
export interface TrialCounter {
  used(): Promise<number>
  /**
   * Adds `count` files when the total stays within `max`; returns false (and adds nothing) when it
   * would not. Calls in one process are serialized so two requests cannot both take the last file.
   */
  reserve(count: number, max: number): Promise<boolean>
}

const KEY = 'license:trial'

export function createTrialCounter(records: Storage): TrialCounter {
  let chain: Promise<unknown> = Promise.resolve()
  const read = async () => {
    const value = await records.getItem<{ used_files?: number }>(KEY)
    const used = value && typeof value === 'object' ? Number(value.used_files) : 0
    return Number.isInteger(used) && used > 0 ? used : 0
  }
  return {
    used: read,
    reserve(count, max) {
      const next = chain.then(async () => {
        const used = await read()
        if (used + count > max) return false
        await records.setItem(KEY, { used_files: used + count, updated_at: new Date().toISOString() })
        return true
      })
      chain = next.catch(() => undefined)
      return next
    },
  }
}
