import type { Redis } from 'ioredis'
import type { TaskStore } from '../storage/task-store.ts'
import { ALL_OWNERS } from './task-owner.ts'
import type { TaskState } from './task-state.ts'

/**
 * Which tasks each owner (API key digest) has, newest first, so listing a key's tasks reads only
 * the records of the page it returns, not every record in the store. An entry is
 * `<created_at> <task_id>`: ISO 8601 UTC times of one width sort as text in time order, and the
 * task id breaks ties, so a position in the list is one string that never moves. One more list,
 * ALL_OWNERS's, holds every task (the console's administrator lists them all).
 */
export interface TaskIndex {
  add(task: IndexedTask): Promise<void>
  remove(task: IndexedTask): Promise<void>
  /** Up to `count` entries of the owner's (every task's for ALL_OWNERS), newest first, after the entry `after` (from the newest when absent). */
  page(owner: string, after: string | undefined, count: number): Promise<string[]>
}

type IndexedTask = Pick<TaskState, 'task_id' | 'created_at' | 'owner'>

/** The index entry of a task. */
export const indexEntry = (task: Pick<TaskState, 'task_id' | 'created_at'>) => `${task.created_at} ${task.task_id}`

/** The lists a task is in: its owner's (a task without one has none) and everyone's. */
const listsOf = (task: IndexedTask) => (task.owner ? [task.owner, ALL_OWNERS] : [ALL_OWNERS])

/** The task id of an index entry. */
export const entryTaskId = (entry: string) => entry.slice(entry.lastIndexOf(' ') + 1)

/**
 * The index in Redis: one sorted set per owner, every member at score 0 so the set is ordered by
 * the entry's text and read backwards by range (ZREVRANGEBYLEX), which keeps a cursor exact
 * whatever is added meanwhile.
 */
export function createRedisTaskIndex(client: Redis, prefix: string): TaskIndex {
  const key = (owner: string) => `${prefix}:${owner}`
  return {
    async add(task) {
      const entry = indexEntry(task)
      await Promise.all(listsOf(task).map((owner) => client.zadd(key(owner), 0, entry)))
    },
    async remove(task) {
      const entry = indexEntry(task)
      await Promise.all(listsOf(task).map((owner) => client.zrem(key(owner), entry)))
    },
    page: (owner, after, count) => client.zrevrangebylex(key(owner), after === undefined ? '+' : `(${after}`, '-', 'LIMIT', 0, count),
  }
}

/**
 * The index in this process's memory, for deployments where one process holds every record (the
 * local queue): filled from the store once, on the first listing, and kept by every write after.
 */
export function createMemoryTaskIndex(seed: () => Promise<TaskState[]>): TaskIndex {
  const owners = new Map<string, Set<string>>()
  let seeded: Promise<void> | undefined
  const add = (task: IndexedTask) => {
    for (const owner of listsOf(task)) {
      let entries = owners.get(owner)
      if (!entries) owners.set(owner, (entries = new Set()))
      entries.add(indexEntry(task))
    }
  }
  return {
    async add(task) {
      add(task)
    },
    async remove(task) {
      for (const owner of listsOf(task)) owners.get(owner)?.delete(indexEntry(task))
    },
    async page(owner, after, count) {
      seeded ??= seed().then((tasks) => tasks.forEach(add))
      await seeded
      // Sorting on each listing costs ~1 ms per 10 000 tasks of the owner: cheaper than keeping order on every write.
      const entries = [...(owners.get(owner) ?? [])].sort().reverse()
      const start = after === undefined ? 0 : entries.findIndex((entry) => entry < after)
      return start < 0 ? [] : entries.slice(start, start + count)
    },
  }
}

/**
 * A task store that keeps `index` up to date: a task enters it when it is first written (pending)
 * and leaves it when its record is removed (delete, retention sweep).
 */
export function withTaskIndex(inner: TaskStore, index: TaskIndex): TaskStore {
  return {
    get: (id) => inner.get(id),
    async put(task) {
      await inner.put(task)
      if (task.status === 'pending') await index.add(task)
    },
    async remove(id) {
      const task = await inner.get(id)
      await inner.remove(id)
      if (task) await index.remove(task)
    },
    list: () => inner.list(),
  }
}
