import {
  ERROR_TEXTS,
  IMAGE_EXTENSIONS,
  LIMIT_EXCEEDED_STATUS,
  type ParseResult,
  type SubmitResponse,
  type TaskType,
  uploadExtensionOf,
} from '@mos/sdk/contract'
import type { H3Event } from 'h3'
import type { ServiceContext } from '../context.ts'
import { ApiError } from '../errors.ts'
import { idempotencyKeyOf, idempotent, type IdempotentRequest } from '../idempotency/idempotent-submit.ts'
import { callbackUrlOf } from '../webhooks/callback-field.ts'
import { requestFacts } from '../logging/request-log.ts'
import { admitFiles } from '../limits/admission.ts'
import { taskFileKey } from '../tasks/task-runner.ts'
import { newTaskId } from '../tasks/task-service.ts'
import { enterCommit } from './commit-point.ts'
import { formatMb, readUploadStream, type UploadedFile } from '../uploads/read-upload.ts'

/** One submit endpoint: which task it creates, which inputs it takes, how its fields validate. */
export interface SubmitRoute {
  type: TaskType
  path: string
  /** Input formats (lower-case extensions) the operation reads. */
  formats: () => readonly string[]
  parseFields: (raw: Record<string, string>, ctx: ServiceContext) => ParseResult<object>
}

/** The lower-case extension of a file name ('' when it has none): the contract's, which the SDK's CLI checks files by too. */
export const extensionOf = uploadExtensionOf

/** The 400 for a file the operation cannot read; the text names the extension (section 7). */
export function assertFormat(filename: string, formats: readonly string[]): string {
  const extension = extensionOf(filename)
  if (!formats.includes(extension)) throw new ApiError(400, ERROR_TEXTS.unsupportedFormat(extension || '(no extension)'))
  return extension
}

const TEXTURE_TASK_TYPES: ReadonlySet<TaskType> = new Set(['texture_optimize', 'texture_ktx2'])

/**
 * A standalone image sent to a texture operation is one texture: the tier's texture limit
 * (section 8, "Maximum texture size … Texture operations") applies to the upload itself. Inside a
 * model, the engine applies it to each image instead, so a model is never refused for its total.
 */
function assertTextureLimit(ctx: ServiceContext, type: TaskType, file: UploadedFile): void {
  const { maxTextureBytes } = ctx.limits()
  if (!TEXTURE_TASK_TYPES.has(type) || maxTextureBytes < 0 || file.size <= maxTextureBytes) return
  if (!(IMAGE_EXTENSIONS as readonly string[]).includes(extensionOf(file.filename))) return
  throw new ApiError(LIMIT_EXCEEDED_STATUS[ctx.variant], ERROR_TEXTS.textureTooLarge(formatMb(file.size), formatMb(maxTextureBytes)))
}

/**
 * Runs a submit once per Idempotency-Key (a Mos extension) against the service's stores. `run` acts
 * for good (trial file, task record, queue), so it begins past `enterCommit`: not at all if a
 * stopping process answered 503 in the handler's place while the upload was stored or its key
 * claimed (the caller's refusal path then removes the upload).
 */
export function idempotentSubmit<T>(
  ctx: ServiceContext,
  request: Omit<IdempotentRequest, 'store' | 'files'>,
  run: () => Promise<T>,
): Promise<T> {
  return idempotent({ ...request, store: ctx.storage.idempotency, files: ctx.storage.files }, () => {
    enterCommit(request.event)
    return run()
  })
}

/**
 * Handles a single-file submission: streams the upload straight to the task's input key, validates
 * the fields, records a pending task. On any refusal the upload is removed and no task exists.
 * The request is validated (file present, format, fields) before any licence limit is applied, so
 * a malformed request answers 400 whatever the licence state, and only a valid one spends or is
 * refused a trial file (docs/licensing.md).
 */
export async function submitTask(event: H3Event, ctx: ServiceContext, route: SubmitRoute, owner: string): Promise<SubmitResponse> {
  const idempotencyKey = idempotencyKeyOf(event)
  const taskId = newTaskId()
  const facts = requestFacts(event)
  const key = taskFileKey(taskId, 'input')
  const upload = await readUploadStream(event, {
    files: ctx.storage.files,
    bodyIdleMs: ctx.config.server.bodyIdleTimeoutMs,
    fileField: 'file',
    maxFiles: 1,
    maxFileBytes: ctx.limits().maxFileBytes,
    limitStatus: LIMIT_EXCEEDED_STATUS[ctx.variant],
    place: (filename) => {
      assertFormat(filename, route.formats())
      return { key }
    },
  }).catch(async (error: unknown) => {
    // The file is gone already; its task folder too, so a refused upload leaves nothing.
    await ctx.storage.files.remove(`tasks/${taskId}`).catch(() => undefined)
    throw error
  })
  const file = upload.files[0]
  try {
    // An empty file is as good as none (docs/api.md: "absent or empty"): refused here, before a task
    // exists or a trial file is spent, where the engine would fail it later with "empty file".
    if (!file || file.size === 0) throw new ApiError(400, ERROR_TEXTS.missingField('file'))
    const parsed = route.parseFields(upload.fields, ctx)
    if (!parsed.ok) throw new ApiError(400, parsed.error)
    assertTextureLimit(ctx, route.type, file)
    const callbackUrl = await callbackUrlOf(upload.fields, ctx.config.webhooks)
    const discard = () => ctx.storage.files.remove(`tasks/${taskId}`)
    return await idempotentSubmit(ctx, { event, key: idempotencyKey, owner, path: route.path, upload, discard }, async () => {
      await admitFiles(ctx.access.licensing, 1)
      await ctx.processing.tasks.submit({
        taskId,
        type: route.type,
        filename: file.filename,
        size: file.size,
        format: extensionOf(file.filename),
        options: parsed.value as Record<string, unknown>,
        owner,
        requestId: facts.requestId,
        ...(callbackUrl ? { callbackUrl } : {}),
      })
      facts.taskId = taskId
      return { task_id: taskId, status: 'pending', message: `${route.type} task queued` }
    })
  } catch (error) {
    await ctx.storage.files.remove(`tasks/${taskId}`)
    throw error
  }
}
