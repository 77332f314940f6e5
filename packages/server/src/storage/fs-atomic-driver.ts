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
    await mkdir(dirname(path), { recursive: true })
    const temp = join(dirname(path), `${TEMP_PREFIX}${randomUUID()}`)
    try {
      await writeFile(temp, value)
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
