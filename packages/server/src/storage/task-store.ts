import type { Storage } from 'unstorage'
import type { TaskState } from '../tasks/task-state.ts'

/** Task records in unstorage, one JSON item per task under `tasks:<id>`. */
export interface TaskStore {
  get(id: string): Promise<TaskState | undefined>
  put(task: TaskState): Promise<void>
  remove(id: string): Promise<void>
  /** Every stored task (used at start-up to pick up unfinished work). */
  list(): Promise<TaskState[]>
}

const PREFIX = 'tasks'

/** Task ids are ours (UUIDs), but a path parameter is the client's: keep it to key-safe characters. */
const SAFE_ID = /^[A-Za-z0-9_-]{1,128}$/

export function createTaskStore(storage: Storage): TaskStore {
  return {
    async get(id) {
      if (!SAFE_ID.test(id)) return undefined
      const task = await storage.getItem<TaskState>(`${PREFIX}:${id}`)
      return task && typeof task === 'object' ? task : undefined
    },
    async put(task) {
      await storage.setItem(`${PREFIX}:${task.task_id}`, task)
    },
    async remove(id) {
      await storage.removeItem(`${PREFIX}:${id}`)
    },
    async list() {
      const keys = await storage.getKeys(PREFIX)
      const tasks = await Promise.all(keys.map((key) => storage.getItem<TaskState>(key)))
      return tasks.filter((task): task is TaskState => task !== null)
    },
  }
}

/**
 * Keeps in memory the records this process writes, writing through to `inner`, so status polls and
 * the runner's own reads skip the store. Only for a process that is the only writer of its records
 * (the local queue: one process serves and runs every task); in a cluster another process's write
 * would leave the copy stale. Records written before this process started are read from `inner`,
 * uncached: caching reads could keep a copy older than a write that finished meanwhile. Records are
 * frozen, since every reader shares them. The oldest entries leave past `maxEntries`.
 */
export function withWrittenRecordCache(inner: TaskStore, maxEntries = 10_000): TaskStore {
  const cache = new Map<string, TaskState>()
  return {
    async get(id) {
      return cache.get(id) ?? inner.get(id)
    },
    async put(task) {
      await inner.put(task)
      cache.delete(task.task_id)
      cache.set(task.task_id, deepFreeze(task))
      if (cache.size > maxEntries) cache.delete(cache.keys().next().value!)
    },
    async remove(id) {
      cache.delete(id)
      await inner.remove(id)
    },
    list: () => inner.list(),
  }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const child of Object.values(value)) deepFreeze(child)
  }
  return value
}
