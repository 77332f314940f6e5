import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStorage } from 'unstorage'
import { afterAll, describe, expect, it } from 'vitest'
import { fsAtomicDriver } from '../src/storage/fs-atomic-driver.ts'
import { createTaskStore, withWrittenRecordCache, type TaskStore } from '../src/storage/task-store.ts'
import type { TaskState } from '../src/tasks/task-state.ts'

const dirs: string[] = []
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))))

/** The real fs record store, counting the reads that reach it. */
async function fsStore(): Promise<TaskStore & { reads: number; failNextPut?: boolean }> {
  const dir = await mkdtemp(join(tmpdir(), 'mos-record-cache-'))
  dirs.push(dir)
  const store = createTaskStore(createStorage({ driver: fsAtomicDriver({ base: dir }) }))
  const counted: TaskStore & { reads: number; failNextPut?: boolean } = {
    ...store,
    reads: 0,
    get: (id) => {
      counted.reads++
      return store.get(id)
    },
    put: async (task) => {
      if (counted.failNextPut) throw new Error('disk full')
      return store.put(task)
    },
  }
  return counted
}

const task = (id: string, status: TaskState['status'] = 'pending'): TaskState => ({
  task_id: id,
  type: 'compress',
  status,
  input_filename: 'a.glb',
  input_size_bytes: 1,
  created_at: new Date().toISOString(),
  job: { inputKey: `tasks/${id}/input`, format: 'glb', options: {}, attempts: 0 },
})

describe('record cache of a single-process deployment', () => {
  it('answers reads of what it wrote without reading the store, and writes every record through', async () => {
    const inner = await fsStore()
    const cached = withWrittenRecordCache(inner)
    await cached.put(task('t1'))
    await cached.put({ ...task('t1'), status: 'processing', progress: 40 })
    for (let i = 0; i < 5; i++) expect(await cached.get('t1')).toMatchObject({ status: 'processing', progress: 40 })
    expect(inner.reads).toBe(0)
    // Written through: a process started later (a fresh store on the same folder) sees the last state.
    expect(await inner.get('t1')).toMatchObject({ status: 'processing', progress: 40 })
  })

  it('reads records it did not write (from before a restart) from the store, each time', async () => {
    const inner = await fsStore()
    await inner.put(task('old', 'completed'))
    const cached = withWrittenRecordCache(inner)
    expect(await cached.get('old')).toMatchObject({ status: 'completed' })
    expect(await cached.get('old')).toMatchObject({ status: 'completed' })
    expect(inner.reads).toBe(2)
    expect(await cached.get('never')).toBeUndefined()
  })

  it('keeps the stored state when a write fails, so a poll never shows what was not saved', async () => {
    const inner = await fsStore()
    const cached = withWrittenRecordCache(inner)
    await cached.put(task('t2'))
    inner.failNextPut = true
    await expect(cached.put({ ...task('t2'), status: 'completed' })).rejects.toThrow('disk full')
    expect(await cached.get('t2')).toMatchObject({ status: 'pending' })
  })

  it('hands out frozen records: a reader cannot change what the next reader sees', async () => {
    const cached = withWrittenRecordCache(await fsStore())
    await cached.put(task('t3'))
    const record = await cached.get('t3')
    expect(() => ((record as { status: string }).status = 'failed')).toThrow(TypeError)
    expect(() => ((record!.job.options as Record<string, unknown>).engine = 'x')).toThrow(TypeError)
    expect(await cached.get('t3')).toMatchObject({ status: 'pending', job: { options: {} } })
  })

  it('forgets removed records and the oldest past its size', async () => {
    const inner = await fsStore()
    const cached = withWrittenRecordCache(inner, 2)
    for (const id of ['a', 'b', 'c']) await cached.put(task(id))
    await cached.get('b')
    await cached.get('c')
    expect(inner.reads).toBe(0)
    expect(await cached.get('a')).toMatchObject({ task_id: 'a' })
    expect(inner.reads).toBe(1)
    await cached.remove('b')
    expect(await cached.get('b')).toBeUndefined()
  })
})
