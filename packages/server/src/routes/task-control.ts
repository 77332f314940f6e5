import { CANCELLED_ERROR, taskFinishedText, type TaskDeleted, type TaskRecord } from '@mos/sdk/contract'
import type { H3Event } from 'h3'
import type { ServiceContext } from '../context.ts'
import { ApiError } from '../errors.ts'
import { toTaskRecord } from '../tasks/task-state.ts'
import { enterCommit } from './commit-point.ts'
import { findTask } from './tasks.ts'

/**
 * POST /api/v1/tasks/{id}/cancel (Mos extension): ends a pending or processing task as failed
 * with the error `cancelled` and answers its record. Cancelling a cancelled task again answers the
 * same record; a task that finished otherwise answers 409, since there is nothing left to stop.
 */
export async function cancelTask(event: H3Event, ctx: ServiceContext, id: string, owner: string): Promise<TaskRecord> {
  const task = await findTask(ctx, id, owner)
  if (task.status === 'completed' || (task.status === 'failed' && task.error !== CANCELLED_ERROR)) {
    throw new ApiError(409, taskFinishedText(id, task.status))
  }
  enterCommit(event)
  return toTaskRecord(await ctx.processing.tasks.cancel(task), ctx.variant)
}

/** DELETE /api/v1/tasks/{id} (Mos extension): the record and files removed (a running task cancelled first); 404 afterwards. */
export async function deleteTask(event: H3Event, ctx: ServiceContext, id: string, owner: string): Promise<TaskDeleted> {
  const task = await findTask(ctx, id, owner)
  enterCommit(event)
  await ctx.processing.tasks.remove(task)
  return { task_id: id, deleted: true }
}
