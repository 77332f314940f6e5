import { ListObjectsV2Command } from '@aws-sdk/client-s3'
import { defineDriver } from 'unstorage'
import s3Driver from 'unstorage/drivers/s3'
import { createS3Client, type S3Options } from './s3-file-store.ts'

/**
 * unstorage's s3 driver under a key prefix, with a listing that is right for a shared bucket: the
 * stock driver lists the whole bucket, unpaged (at most 1000 keys) and without a prefix, so records
 * beside files, or more than 1000 tasks, would be missed. Reads and writes are the stock driver's.
 * Records are small JSON objects; each write replaces the whole object (S3 writes are atomic).
 */
export const s3RecordsDriver = defineDriver((options: S3Options & { folder: string }) => {
  const endpoint = options.endpoint || `https://s3.${options.region}.amazonaws.com`
  const base = `${options.prefix}${options.folder}`.replace(/\/+$/, '')
  if (!options.accessKeyId) throw new Error('[storage] [s3] records on S3 need SERVICE__STORAGE__S3__ACCESS_KEY_ID and SECRET_ACCESS_KEY')
  const stock = s3Driver({
    endpoint,
    bucket: options.bucket,
    region: options.region,
    accessKeyId: options.accessKeyId,
    secretAccessKey: options.secretAccessKey,
  })
  const client = createS3Client(options)
  const k = (key: string) => `${base}:${key}`

  async function keysUnder(prefix: string): Promise<string[]> {
    const path = [base, ...prefix.split(/[:/]/).filter(Boolean)].join('/')
    const keys: string[] = []
    let ContinuationToken: string | undefined
    do {
      const page = await client.send(new ListObjectsV2Command({ Bucket: options.bucket, Prefix: `${path}/`, ContinuationToken }))
      for (const item of page.Contents ?? []) if (item.Key) keys.push(item.Key.slice(base.length + 1).replace(/\//g, ':'))
      ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined
    } while (ContinuationToken)
    return keys
  }

  return {
    name: 's3-records',
    options,
    hasItem: (key, opts) => stock.hasItem(k(key), opts),
    getItem: (key, opts) => stock.getItem(k(key), opts),
    setItem: (key, value, opts) => stock.setItem!(k(key), value, opts),
    removeItem: (key, opts) => stock.removeItem!(k(key), opts),
    getMeta: (key, opts) => stock.getMeta!(k(key), opts),
    getKeys: (prefix) => keysUnder(prefix),
    async clear(prefix) {
      const keys = await keysUnder(prefix)
      await Promise.all(keys.map((key) => stock.removeItem!(k(key), {})))
    },
    dispose() {
      client.destroy()
    },
  }
})
