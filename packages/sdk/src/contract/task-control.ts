import { z } from 'zod'
import { taskRecordSchema } from './documents.ts'
import { ERROR_TEXTS } from './errors.ts'
import type { ParseResult } from './fields.ts'
import { TASK_STATUSES, TASK_TYPES } from './vocabulary.ts'

/**
 * Task control, a Mos extension beyond the published interface: listing a key's tasks
 * (`GET /api/v1/tasks`), cancelling one (`POST /api/v1/tasks/{task_id}/cancel`) and deleting one
 * (`DELETE /api/v1/tasks/{task_id}`). The paths sit beside the contract's own task paths, on
 * methods and sub-paths the contract does not use.
 */

/** The `error` of a task ended by a cancel (or a delete of a task still running). */
export const CANCELLED_ERROR = 'cancelled'

/** 409 of a cancel of a task that finished otherwise (completed, or failed on its own). */
export const taskFinishedText = (id: string, status: string) => `task ${id} is ${status}: nothing to cancel`

/** Most tasks one page of the list holds; also its default. */
export const TASK_LIST_MAX_LIMIT = 100

/** Query parameters of `GET /api/v1/tasks`; every one optional. */
export const taskListQuerySchema = z.object({
  status: z.enum(TASK_STATUSES).optional().meta({ description: 'Only tasks in this status.' }),
  type: z.enum(TASK_TYPES).optional().meta({ description: 'Only tasks of this type.' }),
  batch_id: z.string().min(1).max(128).optional().meta({ description: 'Only the tasks of this batch.' }),
  cursor: z.string().min(1).max(512).optional().meta({ description: "A previous page's `next_cursor`: the page after it." }),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(TASK_LIST_MAX_LIMIT)
    .default(TASK_LIST_MAX_LIMIT)
    .meta({ description: `Most tasks in the page (1 to ${TASK_LIST_MAX_LIMIT}).` }),
})

/** One page of `GET /api/v1/tasks`: the caller's tasks, newest first. */
export const taskListSchema = z.object({
  tasks: z.array(taskRecordSchema),
  next_cursor: z.string().nullable().meta({
    description: 'Where the next page starts; null on the last page. A page may hold fewer tasks than `limit` and still have one.',
  }),
})

/** The answer of `DELETE /api/v1/tasks/{task_id}`. */
export const taskDeletedSchema = z.object({ task_id: z.string().min(1), deleted: z.literal(true) })

export type TaskListQuery = z.input<typeof taskListQuerySchema>
export type TaskList = z.infer<typeof taskListSchema>
export type TaskDeleted = z.infer<typeof taskDeletedSchema>

/** What each query parameter accepts, in the words of the contract's invalid-field text. */
const QUERY_RULES: Record<keyof TaskListQuery, string> = {
  status: `must be one of ${TASK_STATUSES.join(', ')}`,
  type: `must be one of ${TASK_TYPES.join(', ')}`,
  batch_id: 'must be a batch id',
  cursor: 'must be a next_cursor from an earlier page',
  limit: `must be an integer from 1 to ${TASK_LIST_MAX_LIMIT}`,
}

/** Validates the list's query (400 texts as for form fields: `invalid value for <name>: <rule>`). */
export function parseTaskListQuery(raw: Record<string, unknown>): ParseResult<z.infer<typeof taskListQuerySchema>> {
  const parsed = taskListQuerySchema.safeParse(raw)
  if (parsed.success) return { ok: true, value: parsed.data }
  const field = parsed.error.issues[0]?.path[0] as keyof TaskListQuery
  return { ok: false, error: ERROR_TEXTS.invalidField(String(field), QUERY_RULES[field]) }
}
