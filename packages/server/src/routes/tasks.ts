import { ERROR_TEXTS } from '@mos/sdk/contract'
import type { ServiceContext } from '../context.ts'
import { contentDisposition } from './content-disposition.ts'
import { ApiError } from '../errors.ts'
import { FileNotFoundError } from '../storage/file-store.ts'
import { ownedBy } from '../tasks/task-owner.ts'
import type { TaskState } from '../tasks/task-state.ts'

/** The task, or the contract's 404: also for a task another key made, so a key cannot tell others' tasks exist. */
export async function findTask(ctx: ServiceContext, id: string, owner: string): Promise<TaskState> {
  const task = await ctx.processing.tasks.get(id)
  if (!task || !ownedBy(task, owner)) throw new ApiError(404, ERROR_TEXTS.taskNotFound(id))
  return task
}

/**
 * GET /api/v1/tasks/{id}/download: the result as a stream with its name and length; 409 while the
 * task has no result (pending, processing, failed), 404 when unknown or its file is gone. For a HEAD
 * (`bodyless`) the same answer without a body: whether the file is still there is asked of the
 * store, the file itself is not opened (on S3 that would start its transfer).
 */
export async function downloadResult(ctx: ServiceContext, id: string, owner: string, bodyless = false): Promise<Response> {
  const task = await findTask(ctx, id, owner)
  if (task.status !== 'completed' || !task.output || !task.job.outputKey) {
    throw new ApiError(409, ERROR_TEXTS.taskNotCompleted(id, task.status))
  }
  const headers = {
    'content-type': 'application/octet-stream',
    'content-length': String(task.output.size_bytes),
    'content-disposition': contentDisposition(task.output.filename),
    'cache-control': 'private, max-age=0, no-store',
  }
  if (bodyless) {
    if ((await ctx.storage.files.size(task.job.outputKey)) === undefined) throw new ApiError(404, ERROR_TEXTS.resultGone(id))
    return new Response(null, { status: 200, headers })
  }
  let stream: ReadableStream<Uint8Array>
  try {
    stream = await ctx.storage.files.read(task.job.outputKey)
  } catch (error) {
    if (error instanceof FileNotFoundError) throw new ApiError(404, ERROR_TEXTS.resultGone(id))
    throw error
  }
  return new Response(stream, { status: 200, headers })
}
