import { submitResponseSchema, VARIANTS } from '@mos/sdk/contract'
import { expect, expectError, expectErrorText, expectJson, expectSchema, expectStatus } from '../assert.ts'
import { fail, type Check } from '../check.ts'
import type { RunContext } from '../context.ts'
import { type Compression, expectCompressedGlb } from '../inspect/compressed.ts'
import { inspectGlb } from '../inspect/model.ts'
import { checkSizeFigures, checkTaskRecords, completedTask, runTask, submit } from '../tasks.ts'

const needs = { feature: 'compress' } as const

/** The heavy mesh through Draco: long enough to be seen processing; shared by several checks. */
export const heavyDraco = (ctx: RunContext) =>
  runTask(ctx, 'compress heavy draco', 'compress', '/compress', { engine: 'draco' }, async (c) => (await c.fixtures()).heavy)
export const heavyDracoCompleted = (ctx: RunContext) =>
  completedTask(ctx, 'compress heavy draco', 'compress', '/compress', { engine: 'draco' }, async (c) => (await c.fixtures()).heavy)
export const smallMeshopt = (ctx: RunContext) =>
  completedTask(ctx, 'compress small meshopt', 'compress', '/compress', { engine: 'meshopt' }, async (c) => (await c.fixtures()).small)
/** A GLB that is not one: its task must fail. */
export const brokenTask = (ctx: RunContext) =>
  runTask(ctx, 'compress broken', 'compress', '/compress', { engine: 'draco' }, async (c) => (await c.fixtures()).broken)

/** An engine's result: a GLB with the engine's extension that decodes to the input's triangles. */
function outputCheck(
  engine: 'draco' | 'meshopt',
  extension: Compression,
  task: (ctx: RunContext) => ReturnType<typeof completedTask>,
  fixture: 'heavy' | 'small',
): Check {
  return {
    id: `compress.output.${engine}`,
    group: 'compress',
    title: `engine=${engine}: the result is a GLB using ${extension} that decodes to the input's triangles`,
    profile: 'core',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      const { output } = await task(ctx)
      const facts = await expectCompressedGlb(output, extension)
      const expected = (await ctx.fixtures())[fixture].triangles
      expect(facts.triangles === expected, `the result decodes to ${facts.triangles} triangles, the input has ${expected}`)
    },
  }
}

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
  outputCheck('draco', 'KHR_draco_mesh_compression', heavyDracoCompleted, 'heavy'),
  outputCheck('meshopt', 'EXT_meshopt_compression', smallMeshopt, 'small'),
  {
    id: 'compress.output.level-0',
    group: 'compress',
    title: 'Variant B level=0: the model comes back uncompressed (no Draco or meshopt extension), same triangles',
    profile: 'core',
    variants: ['B'],
    needs,
    async run(ctx) {
      const { output } = await completedTask(
        ctx,
        'compress small level 0',
        'compress',
        '/compress',
        { engine: 'draco', level: 0 },
        async (c) => (await c.fixtures()).small,
      )
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
      expect(
        run.final.input_filename === heavy.name,
        `input_filename is ${JSON.stringify(run.final.input_filename)}, uploaded ${heavy.name}`,
      )
      expect(
        run.final.input_size_bytes === heavy.bytes.byteLength,
        `input_size_bytes is ${String(run.final.input_size_bytes)}, uploaded ${heavy.bytes.byteLength} bytes`,
      )
    },
  },
  {
    id: 'compress.output.filename',
    group: 'compress',
    title: 'The result is named <stem>.<engine>.glb, saying what was done (mos)',
    profile: 'mos',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      const { filename } = await heavyDracoCompleted(ctx)
      expect(filename === 'conformance-heavy.draco.glb', `output.filename is ${JSON.stringify(filename)}`)
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
      expect(
        typeof body.message === 'string' && body.message.length > 0,
        'the compress response has no message (4.3: a short queued notice)',
      )
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
      expectErrorText(
        await ctx.once('compress json body', () => ctx.http.post('/compress', { json: { engine: 'draco' } })),
        400,
        /^malformed request: /,
      )
    },
  },
)
