import type { TaskDeleted, TaskList, TaskListQuery, TaskRecord } from '../contract/index.ts'
import type { RequestOptions, Transport } from '../request.ts'

/** Filters of `listTasks` (Mos extension): the list's query without the cursor, which the iterator follows. */
export type ListTasksParams = Omit<TaskListQuery, 'cursor'>

/** Task control, a Mos extension beyond the published interface (docs/api.md, "Task control"). */
export interface TaskControlResource {
  /**
   * The key's tasks, newest first, one page per iteration, following `next_cursor` to the last page.
   * @example
   * for await (const page of mos.listTasks({ status: 'failed' })) for (const task of page.tasks) console.log(task.task_id)
   */
  listTasks(params?: ListTasksParams, options?: RequestOptions): AsyncIterableIterator<TaskList>
  /** Cancels a pending or processing task: resolves with its record, failed with the error `cancelled` (409 → `ConflictError` when it finished otherwise). */
  cancelTask(taskId: string, options?: RequestOptions): Promise<TaskRecord>
  /** Removes a task's record and files (cancelling it first when it runs); the id answers 404 afterwards. */
  deleteTask(taskId: string, options?: RequestOptions): Promise<TaskDeleted>
}

const taskPath = (taskId: string) => `/tasks/${encodeURIComponent(taskId)}`

/** Creates the task-control calls on a transport. */
export function createTaskControl(transport: Transport): TaskControlResource {
  return {
    async *listTasks(params = {}, options) {
      let cursor: string | null | undefined
      do {
        const query = new URLSearchParams()
        for (const [name, value] of Object.entries({ ...params, cursor }))
          if (value !== undefined && value !== null) query.set(name, String(value))
        const search = query.size > 0 ? `?${query}` : ''
        const page = (await transport.request({ method: 'GET', path: `/tasks${search}`, responseType: 'json' }, options)) as TaskList
        yield page
        cursor = page.next_cursor
      } while (cursor)
    },
    cancelTask: async (taskId, options) =>
      (await transport.request({ method: 'POST', path: `${taskPath(taskId)}/cancel`, responseType: 'json' }, options)) as TaskRecord,
    deleteTask: async (taskId, options) =>
      (await transport.request({ method: 'DELETE', path: taskPath(taskId), responseType: 'json' }, options)) as TaskDeleted,
  }
}
