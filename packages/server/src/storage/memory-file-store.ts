import { FileNotFoundError, type FileStore } from './file-store.ts'

/** Files in this process's memory: for tests and throw-away runs. */
export function createMemoryFileStore(): FileStore {
  const files = new Map<string, Uint8Array>()
  const modified = new Map<string, number>()
  const get = (key: string) => {
    const bytes = files.get(key)
    if (!bytes) throw new FileNotFoundError(`[storage] [memory] no such file: ${key}`)
    return bytes
  }
  return {
    async write(key, source) {
      const bytes = source instanceof Uint8Array ? source : new Uint8Array(await new Response(source).arrayBuffer())
      files.set(key, bytes)
      modified.set(key, Date.now())
      return bytes.byteLength
    },
    async read(key) {
      const bytes = get(key)
      return new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes)
          controller.close()
        },
      })
    },
    async readBytes(key) {
      return get(key)
    },
    async size(key) {
      return files.get(key)?.byteLength
    },
    async remove(key) {
      for (const k of files.keys()) {
        if (k === key || k.startsWith(`${key}/`)) {
          files.delete(k)
          modified.delete(k)
        }
      }
    },
    async *list(prefix) {
      for (const key of [...files.keys()]) if (key.startsWith(prefix)) yield { key, modifiedAt: modified.get(key) ?? 0 }
    },
  }
}
