import { ERROR_TEXTS, submitResponseSchema, VARIANTS } from '@mos/sdk/contract'
import { describeResponse, expect, expectError, expectErrorText, expectJson, expectSchema, expectStatus } from '../assert.ts'
import { fail, type Check } from '../check.ts'
import type { RunContext } from '../context.ts'
import { expectCompressedGlb } from '../inspect/compressed.ts'
import { inspectGlb } from '../inspect/model.ts'
import { checkSizeFigures, checkTaskRecords, completedTask, download, getTask, runTask, submit, submitTask } from '../tasks.ts'

const needs = { feature: 'compress' } as const

/** The heavy mesh through Draco: long enough to be seen processing; shared by several checks. */
export const heavyDraco = (ctx: RunContext) =>
  runTask(ctx, 'compress heavy draco', 'compress', '/compress', { engine: 'draco' }, async (c) => (await c.fixtures()).heavy)
const heavyDracoCompleted = (ctx: RunContext) =>
  completedTask(ctx, 'compress heavy draco', 'compress', '/compress', { engine: 'draco' }, async (c) => (await c.fixtures()).heavy)
const smallMeshopt = (ctx: RunContext) =>
  completedTask(ctx, 'compress small meshopt', 'compress', '/compress', { engine: 'meshopt' }, async (c) => (await c.fixtures()).small)
/** A GLB that is not one: its task must fail. */
export const brokenTask = (ctx: RunContext) =>
  runTask(ctx, 'compress broken', 'compress', '/compress', { engine: 'draco' }, async (c) => (await c.fixtures()).broken)

/** Section 2.1, 3 and 4.3: a compress task from submission to download, outputs decoded. */
export const compressChecks: Check[] = [
  {
    id: 'task.lifecycle',
    group: 'task',
    title: 'A compress task goes pending → processing → completed with valid records (progress 0..100, ISO times)',
    profile: 'core',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      const run = await heavyDraco(ctx)
      expect(run.final.status === 'completed', `the task ended ${run.final.status}: ${JSON.stringify(run.final.error)}`)
      return checkTaskRecords(run)
    },
  },
  {
    id: 'task.failed-record',
    group: 'task',
    title: 'A task on a broken file ends failed: error and failed_at present, no progress',
    profile: 'core',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      const run = await brokenTask(ctx)
      expect(run.final.status === 'failed', `a GLB of garbage ended ${run.final.status}, expected failed`)
      checkTaskRecords(run)
      return `error: ${String(run.final.error)}`
    },
  },
  {
    id: 'compress.output.draco',
    group: 'compress',
    title: 'engine=draco: the result is a GLB using KHR_draco_mesh_compression that decodes to the input\'s triangles',
    profile: 'core',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      const { output } = await heavyDracoCompleted(ctx)
      const facts = await expectCompressedGlb(output, 'draco')
      const expected = (await ctx.fixtures()).heavy.triangles
      expect(facts.triangles === expected, `the result decodes to ${facts.triangles} triangles, the input has ${expected}`)
    },
  },
  {
    id: 'compress.output.meshopt',
    group: 'compress',
    title: 'engine=meshopt: the result is a GLB using EXT_meshopt_compression that decodes to the input\'s triangles',
    profile: 'core',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      const { output } = await smallMeshopt(ctx)
      const facts = await expectCompressedGlb(output, 'meshopt')
      const expected = (await ctx.fixtures()).small.triangles
      expect(facts.triangles === expected, `the result decodes to ${facts.triangles} triangles, the input has ${expected}`)
    },
  },
  {
    id: 'compress.output.level-0',
    group: 'compress',
    title: 'Variant B level=0: the model comes back uncompressed (no Draco or meshopt extension), same triangles',
    profile: 'core',
    variants: ['B'],
    needs,
    async run(ctx) {
      const { output } = await completedTask(ctx, 'compress small level 0', 'compress', '/compress', { engine: 'draco', level: 0 }, async (c) => (await c.fixtures()).small)
      const facts = await inspectGlb(output).catch((error: Error) => fail(`the result is not a readable GLB: ${error.message}`))
      const used = facts.extensionsUsed.filter((name) => name === 'KHR_draco_mesh_compression' || name === 'EXT_meshopt_compression')
      expect(used.length === 0, `level 0 means raw, but the result uses ${used.join(', ')}`)
      expect(facts.triangles === (await ctx.fixtures()).small.triangles, `the result has ${facts.triangles} triangles`)
    },
  },
  {
    id: 'compress.size-figures',
    group: 'compress',
    title: 'The completed compress output carries compression_ratio = output/input and savings_percent = (1 − ratio)·100',
    profile: 'core',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      checkSizeFigures((await heavyDracoCompleted(ctx)).final)
    },
  },
  {
    id: 'compress.input-fields',
    group: 'compress',
    title: 'The task record names the uploaded file and its size',
    profile: 'core',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      const run = await heavyDraco(ctx)
      const heavy = (await ctx.fixtures()).heavy
      expect(run.final.input_filename === heavy.name, `input_filename is ${JSON.stringify(run.final.input_filename)}, uploaded ${heavy.name}`)
      expect(run.final.input_size_bytes === heavy.bytes.byteLength, `input_size_bytes is ${String(run.final.input_size_bytes)}, uploaded ${heavy.bytes.byteLength} bytes`)
    },
  },
  {
    id: 'compress.output.filename',
    group: 'compress',
    title: 'The result is named <stem>_compressed.glb (mos)',
    profile: 'mos',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      const { filename } = await heavyDracoCompleted(ctx)
      expect(filename === 'conformance-heavy_compressed.glb', `output.filename is ${JSON.stringify(filename)}`)
    },
  },
]

compressChecks.push(
  {
    id: 'compress.submit-response',
    group: 'compress',
    title: 'POST /compress answers task_id, status "pending" and a message',
    profile: 'core',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      const { small } = await ctx.fixtures()
      const response = await submit(ctx, '/compress', { engine: 'meshopt' }, [small])
      expectStatus(response, 200)
      const body = expectSchema(submitResponseSchema, expectJson(response), 'the compress response')
      expect(typeof body.message === 'string' && body.message.length > 0, 'the compress response has no message (4.3: a short queued notice)')
    },
  },
  {
    id: 'compress.malformed-body',
    group: 'compress',
    title: 'POST /compress with a JSON body instead of multipart answers 400 with an error body',
    profile: 'core',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      expectError(await ctx.once('compress json body', () => ctx.http.post('/compress', { json: { engine: 'draco' } })), 400)
    },
  },
  {
    id: 'compress.malformed-body.text',
    group: 'compress',
    title: 'POST /compress with a JSON body: the text starts "malformed request:" (mos)',
    profile: 'mos',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      expectErrorText(await ctx.once('compress json body', () => ctx.http.post('/compress', { json: { engine: 'draco' } })), 400, /^malformed request: /)
    },
  },
)

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
    title: 'The download names the file (Content-Disposition attachment) and is not cached (mos)',
    profile: 'mos',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      const { id, filename } = await heavyDracoCompleted(ctx)
      const headers = (await download(ctx, id)).headers
      const disposition = headers.get('content-disposition') ?? ''
      expect(disposition.startsWith('attachment') && disposition.includes(`filename="${filename}"`), `Content-Disposition is "${disposition}"`)
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
      const run = await brokenTask(ctx)
      expect(run.final.status === 'failed', `the broken upload ended ${run.final.status}`)
      expectErrorText(await ctx.http.get(`/tasks/${run.id}/download`), 409, ERROR_TEXTS.taskNotCompleted(run.id, 'failed'))
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
      const run = await brokenTask(ctx)
      expect(run.final.status === 'failed', `the broken upload ended ${run.final.status}`)
      const response = await ctx.http.get(`/tasks/${run.id}/download`)
      expect(response.status >= 400 && response.status < 500, `expected a 4xx, got: ${describeResponse(response)}`)
      expectStatus(response, response.status)
    },
  },
]
