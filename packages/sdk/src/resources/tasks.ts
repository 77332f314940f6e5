import { TERMINAL_TASK_STATUSES, type CompletedTask, type FailedTask, type TaskRecord } from '../contract/index.ts'
import type { RequestOptions, Transport } from '../request.ts'
import { poll, type WaitOptions } from '../wait.ts'

/** Options of `waitForTask`: the wait's own plus the per-request ones of each poll. */
export type WaitForTaskOptions = WaitOptions<TaskRecord> & Omit<RequestOptions, 'signal'>

/** Task records and results (4.9, 4.10). */
export interface TasksResource {
  /** Reads a task record (404 → `NotFoundError`). */
  getTask(taskId: string, options?: RequestOptions): Promise<TaskRecord>
  /**
   * Polls until the task is completed or failed and resolves with that record. A failed task is
   * not an error here (use the `...AndWait` helpers to get `TaskFailedError`).
   */
  waitForTask(taskId: string, options?: WaitForTaskOptions): Promise<CompletedTask | FailedTask>
  /** Downloads a completed task's result into memory. */
  download(taskId: string, options?: RequestOptions): Promise<Uint8Array>
  /** Downloads a completed task's result as a stream, for large results (see `downloadToFile` on Node). */
  downloadStream(taskId: string, options?: RequestOptions): Promise<ReadableStream<Uint8Array>>
}

const taskPath = (taskId: string) => `/tasks/${encodeURIComponent(taskId)}`

/** Creates the task calls on a transport. */
export function createTasks(transport: Transport): TasksResource {
  const getTask = async (taskId: string, options?: RequestOptions) =>
    (await transport.request({ method: 'GET', path: taskPath(taskId), responseType: 'json' }, options)) as TaskRecord
  return {
    getTask,
    waitForTask: (taskId, options = {}) => {
      const { signal, timeoutMs, onProgress, pollIntervalMs, ...request } = options
      return poll(
        {
          label: `task ${taskId}`,
          fetch: (pollSignal) => getTask(taskId, { ...request, signal: pollSignal }),
          isDone: (task) => TERMINAL_TASK_STATUSES.includes(task.status),
          fingerprint: (task) => `${task.status}:${'progress' in task ? task.progress : ''}`,
        },
        { signal, timeoutMs, onProgress, pollIntervalMs },
      ) as Promise<CompletedTask | FailedTask>
    },
    download: (taskId, options) =>
      transport.request({ method: 'GET', path: `${taskPath(taskId)}/download`, responseType: 'bytes' }, options),
    downloadStream: (taskId, options) =>
      transport.request({ method: 'GET', path: `${taskPath(taskId)}/download`, responseType: 'stream' }, options),
  }
}
