import type { Redis } from 'ioredis'
import { defineDriver, joinKeys, normalizeKey } from 'unstorage'

export interface RedisRecordsDriverOptions {
  /** The process's shared Redis command connection. */
  client: Redis
  /** Key prefix of the records, e.g. `mos:records`. */
  base: string
}

const escapeGlob = (text: string) => text.replace(/[*?[\]\\]/g, '\\$&')

/**
 * Records in Redis under `base:` — the key layout and behaviour of unstorage's redis driver, on a
 * connection the caller passes in (the stock driver opens its own from a URL, one more per process).
 */
export const redisRecordsDriver = defineDriver((options: RedisRecordsDriverOptions) => {
  const { client } = options
  const base = normalizeKey(options.base)
  const full = (key: string) => joinKeys(base, key)
  const pattern = (prefix: string) => `${escapeGlob(full(prefix))}:*`

  async function scan(match: string): Promise<string[]> {
    const keys: string[] = []
    let cursor = '0'
    do {
      const [next, found] = await client.scan(cursor, 'MATCH', match, 'COUNT', 500)
      cursor = next
      keys.push(...found)
    } while (cursor !== '0')
    return keys
  }

  return {
    name: 'redis-records',
    options,
    async hasItem(key) {
      return (await client.exists(full(key))) > 0
    },
    getItem: (key) => client.get(full(key)),
    async setItem(key, value) {
      await client.set(full(key), value)
    },
    async removeItem(key) {
      await client.unlink(full(key))
    },
    async getKeys(prefix) {
      return (await scan(pattern(prefix))).map((key) => key.slice(base.length + 1))
    },
    async clear(prefix) {
      const keys = await scan(pattern(prefix))
      if (keys.length > 0) await client.unlink(...keys)
    },
  }
})
