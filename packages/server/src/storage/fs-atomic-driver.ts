import { randomUUID } from 'node:crypto'
import { mkdir, opendir, rename, rm, stat, writeFile } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { defineDriver } from 'unstorage'
import fsLiteDriver from 'unstorage/drivers/fs-lite'

const TEMP_PREFIX = '.part-'

/**
 * unstorage's fs-lite driver with atomic writes: a value is written beside its key and renamed into
 * place, so a reader polling a task while its worker reports progress never sees half a record.
 */
export const fsAtomicDriver = defineDriver((options: { base: string }) => {
  const base = resolve(options.base)
  const lite = fsLiteDriver({ base, ignore: (path: string) => path.split(/[\\/]/).pop()!.startsWith(TEMP_PREFIX) })
  const pathOf = (key: string) => {
    if (/\.\.:|\.\.$/.test(key)) throw new Error(`[unstorage] [fs-atomic] Invalid key: ${JSON.stringify(key)}`)
    return join(base, key.replace(/:/g, '/'))
  }
  const write = async (key: string, value: string | Uint8Array) => {
    const path = pathOf(key)
    const temp = join(dirname(path), `${TEMP_PREFIX}${randomUUID()}`)
    try {
      // The folder exists for all but the first record under it: create it only when the write says so
      // (a `mkdir` per write was one more thread-pool round trip on every progress update).
      await writeFile(temp, value).catch(async (error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error
        await mkdir(dirname(path), { recursive: true })
        await writeFile(temp, value)
      })
      await rename(temp, path)
    } catch (error) {
      await rm(temp, { force: true })
      throw error
    }
  }
  return {
    ...lite,
    name: 'fs-atomic',
    setItem: (key: string, value: string) => write(key, value),
    setItemRaw: (key: string, value: Uint8Array) => write(key, value),
  }
})

/**
 * Removes the part files under `base` (a records folder of this driver) untouched for `olderThanMs`:
 * a write renames its part file into place or removes it when it fails, so one that old is a write
 * its process was killed in, which nothing else would ever remove. Returns how many it removed.
 */
export async function removeStaleRecordParts(base: string, olderThanMs: number, now = Date.now()): Promise<number> {
  // Walked as a stream: a records folder holds a file per task, and a sweep round should not hold
  // a listing of all of them in memory to find the few part files a kill left.
  const folder = await opendir(base, { recursive: true }).catch((error: NodeJS.ErrnoException) => {
    // No record written yet: no folder, nothing to remove.
    if (error.code === 'ENOENT') return undefined
    throw error
  })
  let removed = 0
  for await (const entry of folder ?? []) {
    if (!entry.isFile() || !entry.name.startsWith(TEMP_PREFIX)) continue
    const path = join(entry.parentPath, entry.name)
    const modified = await stat(path).then(
      (stats) => stats.mtimeMs,
      () => now,
    )
    if (now - modified <= olderThanMs) continue
    await rm(path, { force: true })
    removed++
  }
  return removed
}
