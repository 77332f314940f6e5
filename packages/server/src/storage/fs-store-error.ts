/**
 * A file-system call of the fs file store that the system refused (`EROFS`, `EACCES`, `EIO`,
 * `ENOTDIR` …): the store failing, not the request or the input. Its message keeps the system's
 * words and our path for the service log; clients and task records get the storage text instead
 * (storage-unavailable.ts), as for S3's `S3Error`.
 */
export class FsStoreError extends Error {
  override name = 'FsStoreError'
  constructor(
    readonly operation: string,
    readonly key: string,
    options: { cause: NodeJS.ErrnoException },
  ) {
    super(`[mos] [fs] ${operation} ${key}: ${options.cause.message}`, options)
  }
}

/**
 * `error` as an `FsStoreError` when the file system raised it (it names a system call and a path),
 * else unchanged: a write also fails for its source (a client that went away, a body over its limit),
 * and those are the request's, not the store's.
 */
export function asFsStoreError(operation: string, key: string, error: unknown): unknown {
  const system = error as NodeJS.ErrnoException
  if (typeof system?.syscall !== 'string' || typeof system.path !== 'string') return error
  return new FsStoreError(operation, key, { cause: system })
}
