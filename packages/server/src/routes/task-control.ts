import { CANCELLED_ERROR, taskFinishedText, type TaskDeleted, type TaskRecord } from '@mos/sdk/contract'
import type { ServiceContext } from '../context.ts'
import { ApiError } from '../errors.ts'
import { toTaskRecord } from '../tasks/task-state.ts'
import { findTask } from './tasks.ts'

/**
 * POST /api/v1/tasks/{id}/cancel (Mos extension): ends a pending or processing task as failed
 * with the error `cancelled` and answers its record. Cancelling a cancelled task again answers the
 * same record; a task that finished otherwise answers 409, since there is nothing left to stop.
 */
export async function cancelTask(ctx: ServiceContext, id: string, owner: string): Promise<TaskRecord> {
  const task = await findTask(ctx, id, owner)
  if (task.status === 'completed' || (task.status === 'failed' && task.error !== CANCELLED_ERROR)) {
    throw new ApiError(409, taskFinishedText(id, task.status))
  }
  return toTaskRecord(await ctx.processing.tasks.cancel(task), ctx.variant)
}

/** DELETE /api/v1/tasks/{id} (Mos extension): the record and files removed (a running task cancelled first); 404 afterwards. */
export async function deleteTask(ctx: ServiceContext, id: string, owner: string): Promise<TaskDeleted> {
  await ctx.processing.tasks.remove(await findTask(ctx, id, owner))
  return { task_id: id, deleted: true }
}
