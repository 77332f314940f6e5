import { defineDriver } from 'unstorage'
import type { S3Client } from './s3-client.ts'

export interface S3RecordsDriverOptions {
  /** The process's S3 client (shared with the file store). */
  client: S3Client
  /** Folder of the records in the bucket, e.g. `prod/records`. */
  base: string
}

/**
 * Records as small JSON objects under a folder of a shared bucket, one object per key (`tasks:t-1` →
 * `<base>/tasks/t-1`, the layout of unstorage's s3 driver). Each write replaces the whole object (S3
 * writes are atomic). Listing is by prefix and paged, so records beside files, or more than 1000
 * tasks, are all seen (unstorage's stock driver lists the whole bucket, one page).
 */
export const s3RecordsDriver = defineDriver((options: S3RecordsDriverOptions) => {
  const { client } = options
  const base = options.base.replace(/\/+$/, '')
  const path = (key: string) => [base, ...key.split(/[:/\\]/).filter(Boolean)].join('/')

  async function keysUnder(prefix: string): Promise<string[]> {
    const keys: string[] = []
    for await (const item of client.list(`${path(prefix)}/`)) keys.push(item.key.slice(base.length + 1).replace(/\//g, ':'))
    return keys
  }

  return {
    name: 's3-records',
    options,
    async hasItem(key) {
      return (await client.head(path(key))) !== undefined
    },
    async getItem(key) {
      const body = await client.get(path(key))
      return body ? new Response(body).text() : null
    },
    async setItem(key, value) {
      await client.put(path(key), value)
    },
    async removeItem(key) {
      await client.delete([path(key)])
    },
    async getMeta(key) {
      const head = await client.head(path(key))
      return head ? { mtime: new Date(head.modifiedAt), size: head.size } : null
    },
    getKeys: (prefix) => keysUnder(prefix),
    async clear(prefix) {
      await client.delete((await keysUnder(prefix)).map(path))
    },
  }
})
