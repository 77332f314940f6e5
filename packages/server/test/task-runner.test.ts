import { readFile } from 'node:fs/promises'
import { createEnginePool, workBudgetMessage, workBudgetMs } from '@mos/engines'
import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { afterAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { createMemoryFileStore } from '../src/storage/memory-file-store.ts'
import { createTaskStore, type TaskStore } from '../src/storage/task-store.ts'
import { createTaskRunner, taskFileKey } from '../src/tasks/task-runner.ts'
import type { TaskState } from '../src/tasks/task-state.ts'

const { available, paths } = corpusFiles({ engine: assimp('glTF2', '2CylinderEngine-glTF-Binary', '2CylinderEngine.glb') })

/** The real store, with every record written kept in order, to see what pollers could have seen. */
function recordingStore(): TaskStore & { writes: TaskState[] } {
  const store = createTaskStore(createStorage({ driver: memoryDriver() }))
  const writes: TaskState[] = []
  return {
    ...store,
    writes,
    put: async (task) => {
      writes.push(structuredClone(task))
      return store.put(task)
    },
  }
}

describe.skipIf(!available)('task runner', () => {
  const pool = createEnginePool({ threads: 1 })
  afterAll(() => pool.destroy())

  it('writes the worker progress to the record as it works, rising, and ends at 100', async () => {
    const tasks = recordingStore()
    const files = createMemoryFileStore()
    const runner = createTaskRunner({ tasks, files, pool, progressIntervalMs: 0 })
    await files.write(taskFileKey('t1', 'input'), new Uint8Array(await readFile(paths.engine)))
    await tasks.put({
      task_id: 't1',
      type: 'compress',
      status: 'pending',
      input_filename: '2CylinderEngine.glb',
      input_size_bytes: 1,
      created_at: new Date().toISOString(),
      job: { inputKey: taskFileKey('t1', 'input'), format: 'glb', options: { engine: 'draco', level: 10 }, attempts: 0 },
    })
    await runner.run('t1')
    const processing = tasks.writes.filter((t) => t.status === 'processing').map((t) => t.progress!)
    // The worker reports its stages (read, encoded, written): each reaches the record, in order.
    expect(processing.filter((p) => p > 0 && p < 100).length).toBeGreaterThanOrEqual(3)
    expect(processing).toEqual([...processing].sort((a, b) => a - b))
    expect(tasks.writes.at(-1)).toMatchObject({ status: 'completed', progress: 100 })
  })

  it('fails a task whose job outlasts the work budget of its input size, with the budget text', async () => {
    const tasks = recordingStore()
    const files = createMemoryFileStore()
    // 0.05 s + 0.01 s per MB: 2CylinderEngine.glb (~0.5 MB) gets about 55 ms, far less than draco level 10 needs.
    const runner = createTaskRunner({ tasks, files, pool, workBudget: { baseSeconds: 0.05, secondsPerMb: 0.01 } })
    const bytes = new Uint8Array(await readFile(paths.engine))
    await files.write(taskFileKey('t2', 'input'), bytes)
    await tasks.put({
      task_id: 't2',
      type: 'compress',
      status: 'pending',
      input_filename: '2CylinderEngine.glb',
      input_size_bytes: bytes.byteLength,
      created_at: new Date().toISOString(),
      job: { inputKey: taskFileKey('t2', 'input'), format: 'glb', options: { engine: 'draco', level: 10 }, attempts: 0 },
    })
    await runner.run('t2')
    const budget = workBudgetMs(bytes.byteLength, { baseSeconds: 0.05, secondsPerMb: 0.01 })
    expect(tasks.writes.at(-1)).toMatchObject({ status: 'failed', error: workBudgetMessage(budget) })
  })
})
