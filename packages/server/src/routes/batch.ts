import { ERROR_TEXTS, LIMIT_EXCEEDED_STATUS, parseBatchCompressFields, type BatchRecord, type BatchSubmitResponse } from '@mos/sdk/contract'
import type { H3Event } from 'h3'
import { toBatchRecord } from '../batches/batch-status.ts'
import type { ServiceContext } from '../context.ts'
import { ApiError } from '../errors.ts'
import { idempotencyKeyOf, idempotent } from '../idempotency/idempotent-submit.ts'
import { callbackUrlOf } from '../webhooks/callback-field.ts'
import { requestFacts } from '../logging/request-log.ts'
import { admitFiles } from '../limits/admission.ts'
import { ownedBy } from '../tasks/task-owner.ts'
import { taskFileKey } from '../tasks/task-runner.ts'
import { newTaskId } from '../tasks/task-service.ts'
import { readUploadStream } from '../uploads/read-upload.ts'
import { submitRoutes } from './operations.ts'
import { assertFormat, extensionOf } from './submit.ts'

/**
 * POST /api/v1/batch/compress: every `files` part streams straight to its own task's input, each
 * becomes an ordinary compress task, and a batch record lists them in upload order. The request is
 * all or nothing: a file with an unsupported extension, a file over the size limit or more files
 * than the tier allows refuses the whole batch (nothing is queued); once queued, a task that fails
 * does not touch its siblings. As for single files, the trial is consulted only once the request is
 * valid (submit.ts). The batch and its tasks are owned by `owner` (`keyOwner` of the caller's key).
 */
export async function submitBatch(event: H3Event, ctx: ServiceContext, owner: string): Promise<BatchSubmitResponse> {
  const idempotencyKey = idempotencyKeyOf(event)
  const limits = ctx.limits()
  const limitStatus = LIMIT_EXCEEDED_STATUS[ctx.variant]
  const formats = submitRoutes(ctx.variant, ctx.processing.operations)
    .find((route) => route.type === 'compress')!
    .formats()
  const placed: { task_id: string; filename: string }[] = []
  const upload = await readUploadStream(event, {
    files: ctx.storage.files,
    fileField: 'files',
    maxFiles: limits.maxBatchCount,
    maxFileBytes: limits.maxFileBytes,
    maxTotalBytes: ctx.config.limits.maxBatchSizeMb * 1024 * 1024,
    limitStatus,
    onTooManyFiles: () => new ApiError(limitStatus, ERROR_TEXTS.batchTooLarge(limits.maxBatchCount)),
    place: (filename) => {
      assertFormat(filename, formats)
      const taskId = newTaskId()
      placed.push({ task_id: taskId, filename })
      return { key: taskFileKey(taskId, 'input') }
    },
  }).catch(async (error: unknown) => {
    await Promise.allSettled(placed.map((task) => ctx.storage.files.remove(`tasks/${task.task_id}`)))
    throw error
  })
  const removeUploads = async () => void (await Promise.allSettled(placed.map((task) => ctx.storage.files.remove(`tasks/${task.task_id}`))))
  const sizes = new Map(upload.files.map((file) => [file.key, file.size]))
  const batchId = crypto.randomUUID()
  const facts = requestFacts(event)
  try {
    if (upload.files.length === 0) throw new ApiError(400, ERROR_TEXTS.missingField('files'))
    const parsed = parseBatchCompressFields(upload.fields)
    if (!parsed.ok) throw new ApiError(400, parsed.error)
    const callbackUrl = await callbackUrlOf(upload.fields, ctx.config.webhooks)
    const request = {
      event,
      store: ctx.storage.idempotency,
      files: ctx.storage.files,
      key: idempotencyKey,
      owner,
      path: '/batch/compress',
      upload,
    }
    return await idempotent({ ...request, discard: removeUploads }, async () => {
      await admitFiles(ctx.access.licensing, placed.length)
      // The batch record first: a sub-task may finish before the last one is queued.
      await ctx.storage.batches.put({ batch_id: batchId, created_at: new Date().toISOString(), tasks: placed, owner })
      // The engine takes the contract's names as validated.
      const options = parsed.value
      for (const task of placed) {
        await ctx.processing.tasks.submit({
          taskId: task.task_id,
          type: 'compress',
          filename: task.filename,
          size: sizes.get(taskFileKey(task.task_id, 'input')) ?? 0,
          format: extensionOf(task.filename),
          options,
          batchId,
          owner,
          requestId: facts.requestId,
          ...(callbackUrl ? { callbackUrl } : {}),
        })
      }
      facts.batchId = batchId
      return {
        batch_id: batchId,
        total: placed.length,
        tasks: placed.map((task) => ({ ...task, status: 'pending' as const })),
      }
    })
  } catch (error) {
    await removeUploads()
    throw error
  }
}

/** GET /api/v1/batch/{id}: the batch record (2.4) with counts read from the sub-tasks now; 404 for another key's batch. */
export async function getBatchRecord(ctx: ServiceContext, id: string, owner: string): Promise<BatchRecord> {
  const batch = await ctx.storage.batches.get(id)
  if (!batch || !ownedBy(batch, owner)) throw new ApiError(404, ERROR_TEXTS.batchNotFound(id))
  const tasks = await Promise.all(batch.tasks.map((task) => ctx.processing.tasks.get(task.task_id)))
  return toBatchRecord(
    batch,
    tasks.map((task) => task?.status),
  )
}
