import type { Redis } from 'ioredis'
import type { Storage } from 'unstorage'

/** The trial's processed-file count, kept in record storage so a restart does not reset it. */
export interface TrialCounter {
  used(): Promise<number>
  /**
   * Adds `count` files when the total stays within `max`; returns false (and adds nothing) when it
   * would not. Calls in one process are serialized so two requests cannot both take the last file.
   */
  reserve(count: number, max: number): Promise<boolean>
  close?(): Promise<void>
}

const KEY = 'license:trial'

/** Reads the count kept in record storage (0 when there is none or it is not a count). */
async function readRecordCount(records: Storage): Promise<number> {
  const value = await records.getItem<{ used_files?: number }>(KEY)
  const used = value && typeof value === 'object' ? Number(value.used_files) : 0
  return Number.isInteger(used) && used > 0 ? used : 0
}

const writeRecordCount = (records: Storage, used: number) =>
  records.setItem(KEY, { used_files: used, updated_at: new Date().toISOString() })

export function createTrialCounter(records: Storage): TrialCounter {
  let chain: Promise<unknown> = Promise.resolve()
  const read = () => readRecordCount(records)
  return {
    used: read,
    reserve(count, max) {
      const next = chain.then(async () => {
        const used = await read()
        if (used + count > max) return false
        await writeRecordCount(records, used + count)
        return true
      })
      chain = next.catch(() => undefined)
      return next
    },
  }
}

// Check and add in one step on the Redis server: the count starts from the records' count the first
// time, and a reservation that would pass the maximum adds nothing.
const RESERVE = `
local used = redis.call('GET', KEYS[1])
if not used then
  used = ARGV[3]
  redis.call('SET', KEYS[1], used)
end
if tonumber(used) + tonumber(ARGV[1]) > tonumber(ARGV[2]) then return -1 end
return redis.call('INCRBY', KEYS[1], ARGV[1])
`

/**
 * The trial count for several processes: reserved atomically in Redis, so two API processes racing
 * for the last trial file cannot both get it. The records keep a copy for a later single-node start
 * (best effort: copies written at the same moment may land out of order).
 */
export function createRedisTrialCounter(client: Redis, prefix: string, records: Storage): TrialCounter {
  const key = `${prefix}:${KEY}`
  return {
    async used() {
      const value = await client.get(key)
      return value === null ? readRecordCount(records) : Number(value)
    },
    async reserve(count, max) {
      const seed = await readRecordCount(records)
      const result = Number(await client.eval(RESERVE, 1, key, count, max, seed))
      if (result < 0) return false
      await writeRecordCount(records, result)
      return true
    },
  }
}
