import { mkdir, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { until } from '../../../test/support/poll.ts'
import { API_KEY, tempDir, tree } from './support/harness.ts'
import { type MosProcess, startMos, stopMos } from './support/processes.ts'

/**
 * A record write goes to a part file beside its key and is renamed into place (fs-atomic-driver.ts);
 * a process killed between the two left the part file in the records folder, where nothing removed
 * it. The sweep removes those untouched for the orphan age, and leaves the records themselves.
 */
describe('part files of killed record writes (fs records)', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let server: MosProcess | undefined
  beforeAll(async () => {
    dir = await tempDir()
  })
  afterAll(async () => {
    await stopMos(server, 5000)
    await dir.remove()
  })

  it('are removed by the sweep once as old as the orphan age; the records stay', async () => {
    const base = join(dir.path, 'data')
    const tasks = join(base, 'records', 'tasks')
    await mkdir(tasks, { recursive: true })
    // What a killed write leaves, an hour old, beside a record that must stay.
    const killed = join(tasks, '.part-0b6f3c1e-5d4a-4c8e-9f1a-2b3c4d5e6f70')
    await writeFile(killed, '{"task_id":')
    const hourAgo = new Date(Date.now() - 3_600_000)
    await utimes(killed, hourAgo, hourAgo)
    await writeFile(join(base, 'records', 'keep-me'), '{}')

    server = await startMos('record-parts', {
      SERVICE__AUTH__API_KEYS: API_KEY,
      SERVICE__SERVER__HOST: '127.0.0.1',
      SERVICE__SERVER__PORT: '0',
      SERVICE__STORAGE__FS__BASE: base,
      SERVICE__ENGINES__THREADS: '1',
      SERVICE__STORAGE__ORPHAN_UPLOAD_MINUTES: '1',
    })
    const left = await until(
      () => tree(join(base, 'records')),
      (names) => !names.some((name) => name.includes('.part-')),
      30_000,
      200,
    )
    expect(left).toContain('keep-me')
    expect(left.filter((name) => name.includes('.part-'))).toEqual([])
  }, 60_000)
})
