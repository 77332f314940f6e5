import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Stores } from '../../src/storage/create-storage.ts'
import { FileNotFoundError } from '../../src/storage/file-store.ts'
import { createTaskStore } from '../../src/storage/task-store.ts'
import type { TaskState } from '../../src/tasks/task-state.ts'

export interface StorageSuiteOptions {
  /** Builds the stores under test (a fresh namespace per call). */
  create(): Promise<Stores> | Stores
  /** Removes whatever the run left (prefix keys, folders). */
  cleanup?(): Promise<void>
  /** A second view of the same stores, as another process would open them (absent for memory). */
  reopen?(): Promise<Stores> | Stores
}

const task = (id: string, extra: Partial<TaskState> = {}): TaskState => ({
  task_id: id,
  type: 'compress',
  status: 'pending',
  input_filename: 'a.glb',
  input_size_bytes: 10,
  created_at: new Date().toISOString(),
  job: { inputKey: `tasks/${id}/input`, format: 'glb', options: {}, attempts: 0 },
  ...extra,
})

/** `bytes` as a web stream of uneven chunks, as a network upload arrives (pulled: one chunk per read). */
const chunked = (bytes: Uint8Array, failAfter = Infinity) => {
  let at = 0
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.length) return controller.close()
      if (at > failAfter) return controller.error(new Error('client went away'))
      const size = 64 * 1024 + ((at / 7) % 50_000)
      controller.enqueue(bytes.subarray(at, (at += size)))
    },
  })
}

/**
 * One behaviour for every storage backend (records and files), in the manner of unstorage's
 * `testDriver`: each backend's test file calls this with its own stores.
 */
export function describeStorage(name: string, options: StorageSuiteOptions): void {
  describe(`storage: ${name}`, () => {
    let stores: Stores
    beforeAll(async () => {
      stores = await options.create()
    })
    afterAll(async () => {
      await stores?.close()
      await options.cleanup?.()
    })

    it('keeps task records: put, get, overwrite, list, remove', async () => {
      const tasks = createTaskStore(stores.records)
      expect(await tasks.get('absent-1')).toBeUndefined()
      await tasks.put(task('t-1'))
      await tasks.put(task('t-2', { status: 'processing', progress: 40 }))
      expect(await tasks.get('t-1')).toMatchObject({ task_id: 't-1', status: 'pending', job: { attempts: 0 } })
      await tasks.put(task('t-1', { status: 'completed', progress: 100 }))
      expect((await tasks.get('t-1'))?.status).toBe('completed')
      // Records beside tasks (batches, licence state) are not listed as tasks.
      await stores.records.setItem('batches:b-1', { batch_id: 'b-1' })
      expect((await tasks.list()).map((t) => t.task_id).sort()).toEqual(['t-1', 't-2'])
      await tasks.remove('t-1')
      await tasks.remove('t-1') // removing twice is fine (idempotent sweeps)
      expect(await tasks.get('t-1')).toBeUndefined()
      expect((await tasks.list()).map((t) => t.task_id)).toEqual(['t-2'])
    })

    it('refuses task ids that are not key-safe', async () => {
      const tasks = createTaskStore(stores.records)
      for (const id of ['../x', 'a:b', 'a/b', '']) expect(await tasks.get(id)).toBeUndefined()
    })

    it.runIf(options.reopen)('shows records written by one process to another', async () => {
      const other = await options.reopen!()
      try {
        await createTaskStore(stores.records).put(task('shared-1', { status: 'processing', progress: 55 }))
        expect(await createTaskStore(other.records).get('shared-1')).toMatchObject({ progress: 55 })
        await other.files.write('tasks/shared-1/output', new Uint8Array([1, 2, 3]))
        expect(await stores.files.readBytes('tasks/shared-1/output')).toEqual(new Uint8Array([1, 2, 3]))
      } finally {
        await other.close()
      }
    })

    it('streams a large file in and out unchanged (several upload parts)', async () => {
      const bytes = new Uint8Array(randomBytes(20 * 1024 * 1024 + 12345))
      expect(await stores.files.write('tasks/big/input', chunked(bytes))).toBe(bytes.length)
      expect(await stores.files.size('tasks/big/input')).toBe(bytes.length)
      const back = new Uint8Array(await new Response(await stores.files.read('tasks/big/input')).arrayBuffer())
      expect(back.length).toBe(bytes.length)
      expect(Buffer.compare(back, bytes)).toBe(0)
    })

    it('a source stream that fails mid-write rejects the write and leaves nothing (no file, no unfinished write)', async () => {
      const bytes = new Uint8Array(randomBytes(12 * 1024 * 1024))
      await expect(stores.files.write('tasks/cut-1/input', chunked(bytes, 9 * 1024 * 1024))).rejects.toThrow('client went away')
      expect(await stores.files.size('tasks/cut-1/input')).toBeUndefined()
      const left = []
      for await (const file of stores.files.list('tasks/cut-1')) left.push(file.key)
      expect(left).toEqual([])
    })

    it('a read cancelled part-way ends cleanly, and the file reads whole again after', async () => {
      const bytes = new Uint8Array(randomBytes(3 * 1024 * 1024))
      await stores.files.write('tasks/r-1/output', bytes)
      const reader = (await stores.files.read('tasks/r-1/output')).getReader()
      const first = await reader.read()
      expect(first.done).toBe(false)
      await reader.cancel()
      expect((await stores.files.readBytes('tasks/r-1/output')).byteLength).toBe(bytes.length)
    })

    it('writes bytes, overwrites in place (idempotent re-runs), reads them back', async () => {
      expect(await stores.files.write('tasks/f-1/output', new Uint8Array([1, 2, 3]))).toBe(3)
      expect(await stores.files.write('tasks/f-1/output', new Uint8Array([4, 5]))).toBe(2)
      expect(await stores.files.readBytes('tasks/f-1/output')).toEqual(new Uint8Array([4, 5]))
      expect(await stores.files.size('tasks/f-1/output')).toBe(2)
    })

    it('answers FileNotFoundError / undefined for absent files', async () => {
      await expect(stores.files.read('tasks/none/output')).rejects.toBeInstanceOf(FileNotFoundError)
      await expect(stores.files.readBytes('tasks/none/output')).rejects.toBeInstanceOf(FileNotFoundError)
      expect(await stores.files.size('tasks/none/output')).toBeUndefined()
      await stores.files.remove('tasks/none') // no error
    })

    it('lists files under a prefix with their change time, and removes a task folder whole', async () => {
      const before = Date.now() - 2000
      await stores.files.write('tasks/l-1/input', new Uint8Array([1]))
      await stores.files.write('tasks/l-1/output', new Uint8Array([2]))
      await stores.files.write('tasks/l-2/input', new Uint8Array([3]))
      const listed = []
      for await (const file of stores.files.list('tasks/l-')) listed.push(file)
      expect(listed.map((f) => f.key).sort()).toEqual(['tasks/l-1/input', 'tasks/l-1/output', 'tasks/l-2/input'])
      for (const file of listed) expect(file.modifiedAt).toBeGreaterThan(before)

      await stores.files.remove('tasks/l-1')
      const after = []
      for await (const file of stores.files.list('tasks/l-')) after.push(file.key)
      expect(after).toEqual(['tasks/l-2/input'])
      expect(await stores.files.size('tasks/l-1/output')).toBeUndefined()
    })
  })
}
