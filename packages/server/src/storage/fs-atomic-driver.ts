import { randomUUID } from 'node:crypto'
import { mkdir, rename, rm, writeFile } from 'node:fs/promises'
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
