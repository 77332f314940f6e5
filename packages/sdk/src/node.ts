// @mos/sdk/node: everything of @mos/sdk, plus uploads from paths and Node streams and downloads to
// files. Only this entry imports Node built-ins.
import { createWriteStream, openAsBlob } from 'node:fs'
import { rename, rm, stat } from 'node:fs/promises'
import { basename } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { fileURLToPath } from 'node:url'
import { createClientWith, type Client, type ClientOptions } from './client.ts'
import { InvalidUploadError } from './errors.ts'
import type { Variant } from './contract/index.ts'
import type { RequestOptions } from './request.ts'
import { toFile, type Uploadable } from './upload.ts'

export * from './index.ts'

/** Uploads on Node: the portable kinds plus a file path (string or file: URL) and a Node Readable. */
export type NodeUploadable = Uploadable | string | URL | NodeJS.ReadableStream

/** A Node client: paths and Node streams are accepted wherever a file goes, and results save to disk. */
export type NodeClient<V extends Variant = Variant> = Client<V, NodeUploadable> & {
  /**
   * Streams a completed task's result to `path` (through `path.part`, renamed when complete, so a
   * broken download never looks finished). Resolves with the byte count.
   */
  downloadToFile(taskId: string, path: string, options?: RequestOptions): Promise<{ path: string; bytes: number }>
}

/**
 * A File backed by the file on disk (not read into memory), named after it unless `filename` is given.
 * A path that is missing, unreadable or not a file throws `InvalidUploadError` (with the system's `code`).
 * @example await client.compress({ file: await fileFromPath('scene.glb'), engine: 'meshopt' })
 */
export async function fileFromPath(path: string | URL, filename?: string): Promise<File> {
  const filePath = typeof path === 'string' ? path : fileURLToPath(path)
  // stat first: openAsBlob's own failure ("Unable to open file as blob") names neither path nor cause.
  const stats = await stat(filePath).catch((error: NodeJS.ErrnoException) => {
    throw new InvalidUploadError(`[mos] cannot upload ${filePath}: ${error.message}`, { cause: error, code: error.code })
  })
  if (!stats.isFile()) throw new InvalidUploadError(`[mos] not a file: ${filePath}`)
  const blob = await openAsBlob(filePath).catch((error: NodeJS.ErrnoException) => {
    throw new InvalidUploadError(`[mos] cannot upload ${filePath}: ${error.message}`, { cause: error, code: error.code })
  })
  return new File([blob], filename ?? basename(filePath))
}

/**
 * A File from a Node Readable (read into memory, see `toFile`). An `fs.ReadStream` gives its own name.
 * @example await fileFromStream(createReadStream('model.obj'))
 */
export async function fileFromStream(stream: NodeJS.ReadableStream, filename?: string): Promise<File> {
  const streamPath = (stream as { path?: unknown }).path
  const name = filename ?? (typeof streamPath === 'string' ? basename(streamPath) : undefined)
  const web = Readable.toWeb(stream as Readable) as unknown as ReadableStream<Uint8Array>
  return toFile(web, name)
}

function isNodeReadable(value: unknown): value is NodeJS.ReadableStream {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { pipe?: unknown }).pipe === 'function' &&
    typeof (value as { on?: unknown }).on === 'function'
  )
}

/** Resolves every Node upload kind to a File. */
export async function nodeToFile(input: NodeUploadable, filename?: string): Promise<File> {
  if (typeof input === 'string' || input instanceof URL) return fileFromPath(input, filename)
  if (isNodeReadable(input)) return fileFromStream(input, filename)
  return toFile(input, filename)
}

/**
 * Creates a Node client (see `createClient` of `@mos/sdk`).
 * @example
 * const mos = createClient({ baseURL: 'http://localhost:8080', apiKey: 'key', variant: 'A' })
 * const task = await mos.compressAndWait({ file: 'models/knight.glb', engine: 'draco' })
 * await mos.downloadToFile(task.task_id, 'models/knight.draco.glb')
 */
export function createClient<V extends Variant = Variant>(options: ClientOptions<V>): NodeClient<V> {
  const client = createClientWith<V, NodeUploadable>(options, nodeToFile)
  return {
    ...client,
    async downloadToFile(taskId, path, requestOptions) {
      const partial = `${path}.part`
      const stream = await client.downloadStream(taskId, requestOptions)
      const out = createWriteStream(partial)
      try {
        await pipeline(Readable.fromWeb(stream as import('node:stream/web').ReadableStream<Uint8Array>), out)
        await rename(partial, path)
      } catch (error) {
        // Release the connection too when the file side failed first (e.g. a missing folder).
        await stream.cancel().catch(() => undefined)
        await rm(partial, { force: true })
        throw error
      }
      return { path, bytes: out.bytesWritten }
    },
  }
}
