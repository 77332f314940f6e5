import { ERROR_TEXTS, VARIANTS } from '@mos/sdk/contract'
import { describeResponse, expect, expectErrorText } from '../assert.ts'
import { fail, type Check } from '../check.ts'
import type { RunContext } from '../context.ts'
import { download, getTask, submitTask } from '../tasks.ts'
import { brokenTask, heavyDracoCompleted } from './compress.ts'

const needs = { feature: 'compress' } as const

/** The broken upload's task, failed as it must be, and the answer to downloading it. */
async function downloadFailedTask(ctx: RunContext) {
  const run = await brokenTask(ctx)
  expect(run.final.status === 'failed', `the broken upload ended ${run.final.status}`)
  return { id: run.id, response: await ctx.http.get(`/tasks/${run.id}/download`) }
}

/** Section 4.10: downloads. */
export const downloadChecks: Check[] = [
  {
    id: 'download.content-type',
    group: 'download',
    title: 'The result downloads with Content-Type application/octet-stream',
    profile: 'core',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      const { id } = await heavyDracoCompleted(ctx)
      const type = (await download(ctx, id)).headers.get('content-type') ?? ''
      expect(/^application\/octet-stream\s*(;|$)/i.test(type), `Content-Type is "${type}"`)
    },
  },
  {
    id: 'download.length',
    group: 'download',
    title: 'The downloaded bytes (and Content-Length) equal output.size_bytes',
    profile: 'core',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      const { id, final, output } = await heavyDracoCompleted(ctx)
      const size = (final.output as { size_bytes: number }).size_bytes
      expect(output.byteLength === size, `downloaded ${output.byteLength} bytes, output.size_bytes is ${size}`)
      const length = (await download(ctx, id)).headers.get('content-length')
      if (length !== null) expect(Number(length) === size, `Content-Length is ${length}, output.size_bytes is ${size}`)
    },
  },
  {
    id: 'download.headers',
    group: 'download',
    title: 'The download names the file (Content-Disposition attachment, ASCII and RFC 5987 forms) and is not cached (mos)',
    profile: 'mos',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      const { id, filename } = await heavyDracoCompleted(ctx)
      const headers = (await download(ctx, id)).headers
      const disposition = headers.get('content-disposition') ?? ''
      expect(
        disposition.startsWith('attachment') && disposition.includes(`filename="${filename}"`),
        `Content-Disposition is "${disposition}"`,
      )
      expect(
        disposition.includes(`filename*=UTF-8''${encodeURIComponent(filename)}`),
        `Content-Disposition "${disposition}" has no filename*=UTF-8'' form`,
      )
      expect(/no-store/.test(headers.get('cache-control') ?? ''), `Cache-Control is "${headers.get('cache-control')}"`)
    },
  },
  {
    id: 'download.not-completed',
    group: 'download',
    title: 'Downloading a task that is still pending or processing answers 409 (mos)',
    profile: 'mos',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      const heavy = (await ctx.fixtures()).heavy
      // A task is only reliably unfinished right after submission; try a few times.
      for (let attempt = 0; attempt < 3; attempt++) {
        const id = await submitTask(ctx, '/compress', { engine: 'draco', level: 10 }, heavy)
        const response = await ctx.http.get(`/tasks/${id}/download`)
        if (response.status === 409) {
          expectErrorText(response, 409, new RegExp(`^task ${id} is (pending|processing): no result to download$`))
          return `refused on try ${attempt + 1}`
        }
        const record = await getTask(ctx, id)
        if (response.status === 200 && record.status === 'completed') continue
        fail(`download of an unfinished task: ${describeResponse(response)} (task now ${record.status})`)
      }
      fail('could not catch a task before it completed in 3 tries')
    },
  },
  {
    id: 'download.failed-task',
    group: 'download',
    title: 'Downloading a failed task answers 409 "task <id> is failed: no result to download" (mos)',
    profile: 'mos',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      const { id, response } = await downloadFailedTask(ctx)
      expectErrorText(response, 409, ERROR_TEXTS.taskNotCompleted(id, 'failed'))
    },
  },
  {
    id: 'download.failed-task-refused',
    group: 'download',
    title: 'Downloading a failed task does not answer 200',
    profile: 'core',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      const { response } = await downloadFailedTask(ctx)
      expect(response.status >= 400 && response.status < 500, `expected a 4xx, got: ${describeResponse(response)}`)
    },
  },
]
