/**
 * Where uploaded inputs and results live. Drivers move files as web streams (the API role runs on
 * any runtime with web streams); a driver that keeps files on this machine also says where
 * (`localPath`), so worker threads read them without a copy.
 */
export interface FileStore {
  /**
   * Streams `source` into `key` atomically (readers never see half a file); resolves to the byte
   * count. A source that errors (the writer cut it) rejects the write and leaves nothing behind.
   */
  write(key: string, source: ReadableStream<Uint8Array> | Uint8Array): Promise<number>
  /** A stream of the file; rejects with `FileNotFoundError` when absent. Cancelling it releases the file. */
  read(key: string): Promise<ReadableStream<Uint8Array>>
  /** The whole file in memory (for drivers without a local path). */
  readBytes(key: string): Promise<Uint8Array>
  /** Size in bytes, or undefined when absent. */
  size(key: string): Promise<number | undefined>
  /** Removes `key` and everything under `key/`; no error when absent. */
  remove(key: string): Promise<void>
  /**
   * Every stored file under `prefix` (including unfinished writes a killed process left behind, which
   * only the orphan sweep looks at), with its last change time in ms.
   */
  list(prefix: string): AsyncIterable<StoredFile>
  /** Local filesystem path of `key`, when the driver has one. */
  localPath?(key: string): string
}

export interface StoredFile {
  key: string
  modifiedAt: number
}

/**
 * Whether a listed key is a part file: a write under way, or one its process was killed in, under a
 * name of its own beside its key (`.<random>.part`, renamed into place when whole). The fs file store
 * writes so (fs-file-store.ts), and so does the engine thread its result (engines/src/worker.ts).
 */
export const isPartFile = (key: string): boolean => /(^|\/)\.[^/]+\.part$/.test(key)

export class FileNotFoundError extends Error {
  override name = 'FileNotFoundError'
}
