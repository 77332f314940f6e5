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
