import { FileNotFoundError, type FileStore, type StoredFile } from './file-store.ts'
import type { S3Client } from './s3-client.ts'

export interface S3FileStoreOptions {
  /** Prepended to every key (the deployment's folder and `files/`). */
  prefix: string
}

export type S3FileStore = FileStore & { abortStaleUploads(olderThanMs: number): Promise<number> }

/**
 * Files in an S3 bucket, through the process's one S3 client. Uploads stream in parts (multipart
 * upload), so a large upload holds at most a few parts in memory; the object appears only when the
 * upload completes, so readers never see half a file and a killed process leaves no object (only an
 * unfinished multipart upload, which `abortStaleUploads` or a bucket lifecycle rule removes).
 */
export function createS3FileStore(client: S3Client, options: S3FileStoreOptions): S3FileStore {
  const full = (key: string) => `${options.prefix}${key}`
  const missing = (key: string) => new FileNotFoundError(`[storage] [s3] no such file: ${key}`)

  async function* listObjects(prefix: string): AsyncGenerator<StoredFile> {
    for await (const item of client.list(full(prefix))) {
      yield { key: item.key.slice(options.prefix.length), modifiedAt: item.modifiedAt }
    }
  }

  return {
    write: (key, source) => client.put(full(key), source),
    async read(key) {
      const body = await client.get(full(key))
      if (!body) throw missing(key)
      return body
    },
    async readBytes(key) {
      const body = await client.get(full(key))
      if (!body) throw missing(key)
      return new Uint8Array(await new Response(body).arrayBuffer())
    },
    async size(key) {
      return (await client.head(full(key)))?.size
    },
    async remove(key) {
      // The key itself and everything under `key/` (a task's folder).
      const keys = [full(key)]
      for await (const file of listObjects(`${key}/`)) keys.push(full(file.key))
      await client.delete(keys)
    },
    list: listObjects,
    async abortStaleUploads(olderThanMs) {
      let aborted = 0
      for (const upload of await client.listUploads(full(''))) {
        if (upload.initiatedAt && Date.now() - upload.initiatedAt > olderThanMs) {
          await client.abortUpload(upload)
          aborted++
        }
      }
      return aborted
    },
  }
}
