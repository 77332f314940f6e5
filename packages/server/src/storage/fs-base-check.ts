import { randomUUID } from 'node:crypto'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import type { Config } from '../config/schema.ts'

/** Whether this process keeps anything under SERVICE__STORAGE__FS__BASE: records, files, or a development secret. */
export function usesFsBase(config: Config): boolean {
  const { driver, filesDriver } = config.storage
  const filesOnFs = filesDriver === 'fs' || (filesDriver === 'auto' && driver !== 's3' && driver !== 'memory')
  return driver === 'fs' || filesOnFs || config.auth.apiKeys.length === 0
}

/**
 * Creates the fs base and writes and removes a file in it, so a folder the service cannot write
 * stops start-up naming the setting. Without it a read-only folder started, reported ready, and
 * failed every upload with a 500 that showed its path; a base under a regular file stopped with
 * `entries.map is not a function`.
 */
export async function checkFsBaseWritable(config: Config): Promise<void> {
  if (!usesFsBase(config)) return
  const base = resolve(config.storage.fs.base)
  const probe = join(base, `.write-check-${randomUUID()}`)
  try {
    await mkdir(base, { recursive: true })
    await writeFile(probe, '')
    await rm(probe, { force: true })
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message
    throw new Error(
      `SERVICE__STORAGE__FS__BASE=${config.storage.fs.base} is not a folder this process can write (${code} at ${(error as NodeJS.ErrnoException).path ?? base}): create it and give the service's user write access, or set SERVICE__STORAGE__FS__BASE to such a folder`,
    )
  }
}
