import { TERMINAL_TASK_STATUSES, type TaskType } from '@mos/sdk/contract'
import type { TaskQueue } from '../queue/task-queue.ts'
import type { FileStore } from '../storage/file-store.ts'
import type { TaskStore } from '../storage/task-store.ts'
import type { TaskCancels } from './task-cancels.ts'
import type { TaskLog } from './task-log.ts'
import { taskFileKey } from './task-runner.ts'
import { now, type TaskState } from './task-state.ts'
import { settleTask } from './task-transitions.ts'

export interface NewTask {
  /** From `newTaskId()`; the upload was streamed to `taskFileKey(taskId, 'input')`. */
  taskId: string
  type: TaskType
  filename: string
  size: number
  format: string
  options: Record<string, unknown>
  batchId?: string
  /** `keyOwner` of the submitting API key. */
  owner?: string
  /** X-Request-Id of the upload, kept with the task for its log lines. */
  requestId?: string
  /** The checked `callback_url` of the submit (webhook on completion or failure). */
  callbackUrl?: string
}

export interface TaskService {
  /** Records a pending task for an upload and queues it. */
  submit(task: NewTask): Promise<TaskState>
  get(id: string): Promise<TaskState | undefined>
  /** Queues again every task a stopped process left pending or processing, oldest first. */
  recover(): Promise<number>
  /**
   * Ends an unfinished task as failed with the error `cancelled`: a pending one never runs, a
   * running one is stopped wherever it runs. Returns the ended record; a finished task is returned as it is.
   */
  cancel(task: TaskState): Promise<TaskState>
  /** Removes a task's record and files, cancelling it first when it has not finished. */
  remove(task: TaskState): Promise<void>
}

export interface TaskServiceOptions {
  tasks: TaskStore
  queue: TaskQueue
  log?: TaskLog
  /** The task files, removed with their task. */
  files: FileStore
  cancels: TaskCancels
  /** How long an ended task is kept (`expires_at` of a cancelled one). */
  retentionMs?: number
}

export function createTaskService(options: TaskServiceOptions): TaskService {
  const { tasks, queue } = options
  const cancel = async (task: TaskState) => {
    if (TERMINAL_TASK_STATUSES.includes(task.status)) return task
    const at = new Date()
    const ended = settleTask(task, { kind: 'cancelled' }, { at, ...(options.retentionMs ? { retentionMs: options.retentionMs } : {}) })
    // The record first: a pending task's run reads it and stops; then the running one is told.
    await tasks.put(ended)
    await options.cancels.cancel(task.task_id)
    options.log?.settled(ended)
    return ended
  }
  return {
    cancel,
    async remove(task) {
      await cancel(task)
      await options.files.remove(`tasks/${task.task_id}`)
      await tasks.remove(task.task_id)
    },
    async submit(input) {
      const task = pendingTask(input)
      await tasks.put(task)
      await queue.enqueue(task.task_id, input.requestId ? { requestId: input.requestId } : {})
      options.log?.queued(task)
      return task
    },
    get: (id) => tasks.get(id),
    async recover() {
      const unfinished = (await tasks.list())
        .filter((task) => task.status === 'pending' || task.status === 'processing')
        .sort((a, b) => a.created_at.localeCompare(b.created_at))
      for (const task of unfinished) {
        if (task.status === 'processing') {
          const { progress: _p, started_at: _s, ...rest } = task
          await tasks.put({ ...rest, status: 'pending' })
        }
        await queue.enqueue(task.task_id)
      }
      return unfinished.length
    },
  }
}

/** The pending record of an uploaded task, its input at `taskFileKey(taskId, 'input')`. */
function pendingTask(input: NewTask): TaskState {
  return {
    task_id: input.taskId,
    type: input.type,
    status: 'pending',
    input_filename: input.filename,
    input_size_bytes: input.size,
    created_at: now(),
    ...(input.batchId ? { batch_id: input.batchId } : {}),
    ...(input.owner ? { owner: input.owner } : {}),
    job: {
      inputKey: taskFileKey(input.taskId, 'input'),
      format: input.format,
      options: input.options,
      attempts: 0,
      ...(input.requestId ? { requestId: input.requestId } : {}),
      ...(input.callbackUrl ? { callbackUrl: input.callbackUrl } : {}),
    },
  }
}

/** Task ids are random UUIDs: unguessable, so a task id is as good as a download link. */
export const newTaskId = () => crypto.randomUUID()
