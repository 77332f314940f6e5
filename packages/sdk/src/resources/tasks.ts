import { EXTENSION_HEADERS, TERMINAL_TASK_STATUSES, type CompletedTask, type FailedTask, type TaskRecord } from '../contract/index.ts'
import type { RequestOptions, Transport } from '../request.ts'
import { poll, type WaitOptions } from '../wait.ts'

/** Options of `waitForTask`: the wait's own plus the per-request ones of each poll. */
export type WaitForTaskOptions = WaitOptions<TaskRecord> & Omit<RequestOptions, 'signal'>

/** Task records and results (4.9, 4.10). */
export interface TasksResource {
  /** Reads a task record (404 → `NotFoundError`). */
  getTask(taskId: string, options?: RequestOptions): Promise<TaskRecord>
  /**
   * Waits until the task is completed or failed and resolves with that record. A failed task is
   * not an error here (use the `...AndWait` helpers to get `TaskFailedError`). On a server that
   * advertises the long poll (`Mos-Wait-Max`, a Mos extension) each request waits on the server
   * for up to that long and answers when the task ends, so a wait costs about one request a
   * minute against the rate limit; elsewhere it polls every `pollIntervalMs`.
   */
  waitForTask(taskId: string, options?: WaitForTaskOptions): Promise<CompletedTask | FailedTask>
  /** Downloads a completed task's result into memory. */
  download(taskId: string, options?: RequestOptions): Promise<Uint8Array>
  /** Downloads a completed task's result as a stream, for large results (see `downloadToFile` on Node). */
  downloadStream(taskId: string, options?: RequestOptions): Promise<ReadableStream<Uint8Array>>
}

/** Time a long poll's request gets beyond the wait itself (the answer's trip back, a slow proxy). */
const LONG_POLL_MARGIN_S = 30

const taskPath = (taskId: string) => `/tasks/${encodeURIComponent(taskId)}`

/** Creates the task calls on a transport. */
export function createTasks(transport: Transport): TasksResource {
  const getTask = async (taskId: string, options?: RequestOptions) =>
    (await transport.request({ method: 'GET', path: taskPath(taskId), responseType: 'json' }, options)) as TaskRecord
  return {
    getTask,
    waitForTask: (taskId, options = {}) => {
      const { signal, timeoutMs, onProgress, pollIntervalMs, ...request } = options
      // Learned from the first answer: how long this server lets one request wait.
      let maxWaitSeconds: number | undefined
      const learn = (headers: Headers) => {
        const advertised = Number(headers.get(EXTENSION_HEADERS.waitMax))
        maxWaitSeconds = Number.isInteger(advertised) && advertised > 0 ? advertised : undefined
      }
      const fetchRecord = async (pollSignal: AbortSignal) => {
        const wait = maxWaitSeconds
        const path = wait ? `${taskPath(taskId)}?wait=${wait}` : taskPath(taskId)
        // A waiting request answers after up to `wait` seconds: its time limit must allow for that.
        const timeout = wait && request.timeout !== 0 ? Math.max(request.timeout ?? 0, (wait + LONG_POLL_MARGIN_S) * 1000) : request.timeout
        return (await transport.request(
          { method: 'GET', path, responseType: 'json', onHeaders: learn },
          { ...request, ...(timeout !== undefined ? { timeout } : {}), signal: pollSignal },
        )) as TaskRecord
      }
      return poll(
        {
          label: `task ${taskId}`,
          fetch: fetchRecord,
          isDone: (task) => TERMINAL_TASK_STATUSES.includes(task.status),
          fingerprint: (task) => `${task.status}:${'progress' in task ? task.progress : ''}`,
          pauseMs: () => (maxWaitSeconds ? 0 : undefined),
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
