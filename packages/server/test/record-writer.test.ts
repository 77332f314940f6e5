import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { createStorage } from 'unstorage'
import { afterEach, describe, expect, it } from 'vitest'
import { fsAtomicDriver } from '../src/storage/fs-atomic-driver.ts'
import { createTaskStore } from '../src/storage/task-store.ts'
import { createRecordWriter } from '../src/tasks/record-writer.ts'
import type { TaskState } from '../src/tasks/task-state.ts'

const record = (progress: number, status: TaskState['status'] = 'processing'): TaskState => ({
  task_id: 't1',
  type: 'repair',
  status,
  progress,
  input_filename: 'a.glb',
  input_size_bytes: 1,
  created_at: '2026-11-23T09:00:00.000Z',
  job: { inputKey: 'tasks/t1/input', format: 'glb', options: {}, attempts: 1 },
})

const folders: string[] = []
afterEach(async () => {
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })))
})

/** A task store on real files; its folder is first a plain file, so every write fails until `heal()`. */
async function brokenFsStore() {
  const folder = await mkdtemp(join(tmpdir(), 'mos-record-writer-'))
  folders.push(folder)
  const base = join(folder, 'records')
  await writeFile(base, 'not a folder')
  return { tasks: createTaskStore(createStorage({ driver: fsAtomicDriver({ base }) })), heal: () => rm(base) }
}

/** Collects each retry the writer reports as one line. */
const report = (lines: string[]) => (record: TaskState, reason: string, waitMs: number) =>
  lines.push(`task ${record.task_id}: writing its record failed (${reason}); retrying in ${waitMs} ms`)

describe('record writer', () => {
  it('keeps the order of its writes: a best-effort write queued first cannot land last', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'mos-record-writer-'))
    folders.push(folder)
    const tasks = createTaskStore(createStorage({ driver: fsAtomicDriver({ base: folder }) }))
    const writer = createRecordWriter({ tasks })
    for (let progress = 1; progress < 40; progress++) void writer.offer(record(progress))
    await writer.put(record(100, 'completed'))
    await writer.settled()
    expect(await tasks.get('t1')).toMatchObject({ status: 'completed', progress: 100 })
  })

  it('retries a failing required write with doubling waits until the store takes it, saying why each time', async () => {
    const { tasks, heal } = await brokenFsStore()
    const lines: string[] = []
    const writer = createRecordWriter({ tasks, firstWaitMs: 20, maxWaitMs: 80, onRetry: report(lines) })
    const put = writer.put(record(0))
    await sleep(300)
    await heal()
    await put
    expect(await tasks.get('t1')).toMatchObject({ status: 'processing' })
    expect(lines.length).toBeGreaterThanOrEqual(3)
    expect(lines[0]).toMatch(/^task t1: writing its record failed \(.+\); retrying in 20 ms$/)
    expect(lines[1]).toMatch(/retrying in 40 ms$/)
    expect(lines.slice(2).every((line) => line.endsWith('retrying in 80 ms'))).toBe(true)
  })

  it('gives up after its retry time, and a failed write does not block the next one', async () => {
    const { tasks, heal } = await brokenFsStore()
    const writer = createRecordWriter({ tasks, retryMs: 100, firstWaitMs: 20 })
    const started = Date.now()
    await expect(writer.put(record(0))).rejects.toThrow()
    expect(Date.now() - started).toBeLessThan(1000)
    await heal()
    await writer.put(record(5))
    expect(await tasks.get('t1')).toMatchObject({ progress: 5 })
  })

  it('tries a best-effort write once, and does not retry while the process stops', async () => {
    const { tasks } = await brokenFsStore()
    const lines: string[] = []
    await expect(createRecordWriter({ tasks, onRetry: report(lines) }).offer(record(3))).rejects.toThrow()
    await expect(createRecordWriter({ tasks, stopping: () => true, onRetry: report(lines) }).put(record(3))).rejects.toThrow()
    expect(lines).toEqual([])
  })
})
