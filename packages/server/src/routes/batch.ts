import { ERROR_TEXTS, LIMIT_EXCEEDED_STATUS, parseBatchCompressFields, type BatchRecord, type BatchSubmitResponse } from '@mos/sdk/contract'
import type { H3Event } from 'h3'
import { toBatchRecord } from '../batches/batch-status.ts'
import type { ServiceContext } from '../context.ts'
import { ApiError } from '../errors.ts'
import { idempotencyKeyOf } from '../idempotency/idempotent-submit.ts'
import { callbackUrlOf } from '../webhooks/callback-field.ts'
import { requestFacts } from '../logging/request-log.ts'
import { admitFiles } from '../limits/admission.ts'
import { ownedBy } from '../tasks/task-owner.ts'
import { taskFileKey } from '../tasks/task-runner.ts'
import { newTaskId } from '../tasks/task-service.ts'
import { readUploadStream, type Upload } from '../uploads/read-upload.ts'
import { submitRoutes, withTextureLimit } from './operations.ts'
import { assertFormat, extensionOf, idempotentSubmit } from './submit.ts'

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
  const { upload, placed } = await readBatchUpload(event, ctx)
  const discard = () => removeTaskFolders(ctx, placed)
  const facts = requestFacts(event)
  try {
    // All or nothing, as for a bad extension: one empty file refuses the batch, as an empty `file` does a submit.
    if (upload.files.length === 0 || upload.files.some((file) => file.size === 0)) {
      throw new ApiError(400, ERROR_TEXTS.missingField('files'))
    }
    // Compress's rules on every field (extensions included) and its texture limit, as each file is a compress task.
    const parsed = withTextureLimit('compress', parseBatchCompressFields(upload.fields), ctx, ctx.processing.operations)
    if (!parsed.ok) throw new ApiError(400, parsed.error)
    const callbackUrl = await callbackUrlOf(upload.fields, ctx.config.webhooks)
    const path = '/batch/compress'
    return await idempotentSubmit(ctx, { event, key: idempotencyKey, owner, path, upload, discard }, async () => {
      await admitFiles(ctx.access.licensing, placed.length)
      // The engine takes the contract's names as validated.
      const batch = {
        placed,
        sizes: new Map(upload.files.map((file) => [file.key, file.size])),
        options: parsed.value,
        owner,
        requestId: facts.requestId,
        callbackUrl,
      }
      const response = await queueBatch(ctx, batch)
      facts.batchId = response.batch_id
      return response
    })
  } catch (error) {
    await discard()
    throw error
  }
}

/** A batch's task, named before its file is read so the file streams straight to the task's input. */
interface PlacedTask {
  task_id: string
  filename: string
}

/**
 * Reads the `files` parts, each to a new task's input as it arrives; a refused part (format, size,
 * count) refuses the whole upload and removes what was placed.
 */
async function readBatchUpload(event: H3Event, ctx: ServiceContext): Promise<{ upload: Upload; placed: PlacedTask[] }> {
  const limits = ctx.limits()
  const limitStatus = LIMIT_EXCEEDED_STATUS[ctx.variant]
  const formats = submitRoutes(ctx.variant, ctx.processing.operations)
    .find((route) => route.type === 'compress')!
    .formats()
  const placed: PlacedTask[] = []
  const upload = await readUploadStream(event, {
    files: ctx.storage.files,
    bodyIdleMs: ctx.config.server.bodyIdleTimeoutMs,
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
    await removeTaskFolders(ctx, placed)
    throw error
  })
  return { upload, placed }
}

async function removeTaskFolders(ctx: ServiceContext, placed: readonly PlacedTask[]): Promise<void> {
  await Promise.allSettled(placed.map((task) => ctx.storage.files.remove(`tasks/${task.task_id}`)))
}

/** A valid, admitted batch: what `queueBatch` records and queues. */
interface ValidBatch {
  placed: PlacedTask[]
  /** Uploaded bytes by input file key. */
  sizes: Map<string, number>
  /** Validated compress options, in the contract's names, as the engine takes them. */
  options: object
  owner: string
  requestId: string
  callbackUrl: string | undefined
}

/** Records the batch and queues one compress task per file, in upload order. */
async function queueBatch(ctx: ServiceContext, batch: ValidBatch): Promise<BatchSubmitResponse> {
  const { placed, owner, callbackUrl } = batch
  const batchId = crypto.randomUUID()
  // The batch record first: a sub-task may finish before the last one is queued.
  await ctx.storage.batches.put({ batch_id: batchId, created_at: new Date().toISOString(), tasks: placed, owner })
  for (const task of placed) {
    await ctx.processing.tasks.submit({
      taskId: task.task_id,
      type: 'compress',
      filename: task.filename,
      size: batch.sizes.get(taskFileKey(task.task_id, 'input')) ?? 0,
      format: extensionOf(task.filename),
      options: batch.options as Record<string, unknown>,
      batchId,
      owner,
      requestId: batch.requestId,
      ...(callbackUrl ? { callbackUrl } : {}),
    })
  }
  return {
    batch_id: batchId,
    total: placed.length,
    tasks: placed.map((task) => ({ ...task, status: 'pending' as const })),
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
