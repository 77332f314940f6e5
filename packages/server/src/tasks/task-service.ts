import { randomUUID } from 'node:crypto'
import type { TaskType } from '@mos/sdk/contract'
import type { TaskQueue } from '../queue/task-queue.ts'
import type { TaskStore } from '../storage/task-store.ts'
import type { TaskLog } from './task-log.ts'
import { taskFileKey } from './task-runner.ts'
import { now, type TaskState } from './task-state.ts'

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
}

export interface TaskService {
  /** Records a pending task for an upload and queues it. */
  submit(task: NewTask): Promise<TaskState>
  get(id: string): Promise<TaskState | undefined>
  /** Queues again every task a stopped process left pending or processing, oldest first. */
  recover(): Promise<number>
}

export function createTaskService(options: { tasks: TaskStore; queue: TaskQueue; log?: TaskLog }): TaskService {
  const { tasks, queue } = options
  return {
    async submit(input) {
      const id = input.taskId
      const inputKey = taskFileKey(id, 'input')
      const task: TaskState = {
        task_id: id,
        type: input.type,
        status: 'pending',
        input_filename: input.filename,
        input_size_bytes: input.size,
        created_at: now(),
        ...(input.batchId ? { batch_id: input.batchId } : {}),
        ...(input.owner ? { owner: input.owner } : {}),
        job: {
          inputKey,
          format: input.format,
          options: input.options,
          attempts: 0,
          ...(input.requestId ? { requestId: input.requestId } : {}),
        },
      }
      await tasks.put(task)
      await queue.enqueue(id, input.requestId ? { requestId: input.requestId } : {})
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

/** Task ids are random UUIDs: unguessable, so a task id is as good as a download link. */
export const newTaskId = () => randomUUID()
