import { CANCELLED_ERROR, ERROR_TEXTS, VARIANTS, taskDeletedSchema, taskListSchema, taskRecordSchema } from '@mos/sdk/contract'
import { expect, expectErrorText, expectJson, expectSchema, expectStatus } from '../assert.ts'
import { skip, type Check } from '../check.ts'
import type { RunContext } from '../context.ts'
import { submitTask, waitForTask } from '../tasks.ts'

/**
 * Task control, a Mos extension (docs/api.md): run against a deployment whose OpenAPI document
 * (`GET /api/v1/openapi.json`) lists the operation, skipped elsewhere.
 */
async function assertAdvertised(ctx: RunContext, method: string, path: string): Promise<void> {
  const document = await ctx.once('openapi', async () => {
    const response = await ctx.http.get('/openapi.json', { key: null })
    return response.status === 200 ? (response.json() as { paths?: Record<string, Record<string, unknown>> } | undefined) : undefined
  })
  if (!document?.paths?.[`/api/v1${path}`]?.[method])
    skip(`${method.toUpperCase()} /api/v1${path} is not in the deployment's OpenAPI document`)
}

const needs = { feature: 'compress' } as const

/** A small compress task, finished. */
const finishedTask = (ctx: RunContext, key: string) =>
  ctx.once(`task-control ${key}`, async () => {
    const id = await submitTask(ctx, '/compress', { engine: 'meshopt' }, (await ctx.fixtures()).small)
    await waitForTask(ctx, id, 'compress')
    return id
  })

/** A task-control check: skipped unless the deployment advertises the operation it exercises. */
function taskControlCheck(name: string, title: string, method: string, path: string, run: Check['run']): Check {
  return {
    id: `task-control.${name}`,
    group: 'task-control',
    title,
    profile: 'mos',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      await assertAdvertised(ctx, method, path)
      return run(ctx)
    },
  }
}

export const taskControlChecks: Check[] = [
  taskControlCheck(
    'list',
    'GET /tasks lists the key’s tasks newest first, a page at a time, with next_cursor (mos)',
    'get',
    '/tasks',
    async (ctx) => {
      const first = await finishedTask(ctx, 'list-1')
      const second = await finishedTask(ctx, 'list-2')
      // Other checks submit meanwhile: walk pages of 2 until both tasks are seen, newest first throughout.
      const seen: { task_id: string; created_at: string }[] = []
      let cursor: string | null = null
      for (let pages = 0; pages < 50 && !seen.some((task) => task.task_id === first); pages++) {
        const query: string = `/tasks?limit=2&type=compress${cursor ? `&cursor=${cursor}` : ''}`
        const page = expectSchema(taskListSchema, expectJson(await ctx.http.get(query)), `GET ${query}`)
        expect(page.tasks.length <= 2, `a page of limit=2 holds ${page.tasks.length} tasks`)
        seen.push(...page.tasks)
        cursor = page.next_cursor
        if (!cursor) break
      }
      const ids = seen.map((task) => task.task_id)
      expect(new Set(ids).size === ids.length, 'a task appears on two pages')
      expect(ids.includes(first) && ids.indexOf(second) < ids.indexOf(first), `the newer task ${second} is not listed before ${first}`)
      const times = seen.map((task) => task.created_at)
      expect(
        times.every((time, i) => i === 0 || time <= times[i - 1]!),
        'the list is not newest first',
      )
      expectErrorText(await ctx.http.get('/tasks?limit=0'), 400, ERROR_TEXTS.invalidField('limit', 'must be an integer from 1 to 100'))
    },
  ),
  taskControlCheck(
    'cancel',
    'POST /tasks/{id}/cancel ends a task failed with error "cancelled"; a completed one answers 409 (mos)',
    'post',
    '/tasks/{task_id}/cancel',
    async (ctx) => {
      const id = await submitTask(ctx, '/compress', { engine: 'draco', level: 10 }, (await ctx.fixtures()).heavy)
      const response = await ctx.http.post(`/tasks/${id}/cancel`)
      // A fast deployment may have finished the task already: then the 409 is the right answer.
      if (response.status === 409) return 'the task had finished before the cancel: 409'
      expectStatus(response, 200)
      const record = expectSchema(taskRecordSchema, expectJson(response), 'the cancelled record')
      expect(record.status === 'failed' && record.error === CANCELLED_ERROR, `the cancel answered ${JSON.stringify(record)}`)
      const final = await waitForTask(ctx, id, 'compress')
      expect(final.final.status === 'failed' && final.final.error === CANCELLED_ERROR, `the task ended ${JSON.stringify(final.final)}`)
      expectStatus(await ctx.http.post(`/tasks/${await finishedTask(ctx, 'cancel-done')}/cancel`), 409)
    },
  ),
  taskControlCheck(
    'delete',
    'DELETE /tasks/{id} removes the task: 404 on status and download afterwards (mos)',
    'delete',
    '/tasks/{task_id}',
    async (ctx) => {
      const id = await finishedTask(ctx, 'delete')
      const response = await ctx.http.request('DELETE', `/tasks/${id}`)
      expectStatus(response, 200)
      expectSchema(taskDeletedSchema, expectJson(response), 'the delete answer')
      expectErrorText(await ctx.http.get(`/tasks/${id}`), 404, ERROR_TEXTS.taskNotFound(id))
      expectErrorText(await ctx.http.get(`/tasks/${id}/download`), 404, ERROR_TEXTS.taskNotFound(id))
    },
  ),
]
