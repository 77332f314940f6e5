import { BATCH_STATUSES, batchRecordSchema, batchSubmitResponseSchema, LIMIT_EXCEEDED_STATUS, VARIANTS } from '@mos/sdk/contract'
import { z } from 'zod'
import { expect, expectError, expectJson, expectSchema, expectStatus } from '../assert.ts'
import { fail, type Check } from '../check.ts'
import type { RunContext } from '../context.ts'
import type { Fixture } from '../fixtures/index.ts'
import { checkTaskRecords, download, getTask, longPoll, submit, waitForTask } from '../tasks.ts'

const FILES = 3
/** The contract shows only "processing": any string here; the mos values are checked apart. */
const contractBatchSchema = batchRecordSchema.extend({ status: z.string().min(1) })

type BatchRecord = z.infer<typeof contractBatchSchema>

/** Three copies of the small mesh under distinct names, submitted once per run. */
function batchRun(ctx: RunContext) {
  return ctx.once('batch run', async () => {
    const { small } = await ctx.fixtures()
    return followBatch(
      ctx,
      Array.from({ length: FILES }, (_, i) => ({ ...small, name: `conformance-batch-${i + 1}.glb` })),
    )
  })
}

/** The small mesh and the broken GLB in one batch; its last record. */
function partialBatch(ctx: RunContext) {
  return ctx.once('batch partial', async () => {
    const { small, broken } = await ctx.fixtures()
    return (await followBatch(ctx, [small, broken])).final
  })
}

/** Submits a batch and polls its record until every sub-task has ended. */
async function followBatch(ctx: RunContext, files: Fixture[]) {
  {
    const response = await submit(ctx, '/batch/compress', { engine: 'draco' }, files, { fileField: 'files' })
    expectStatus(response, 200)
    const submitted = expectSchema(batchSubmitResponseSchema, expectJson(response), 'the batch submit response')
    const records: BatchRecord[] = []
    const deadline = Date.now() + ctx.taskTimeoutMs
    for (;;) {
      const get = await ctx.http.get(`/batch/${encodeURIComponent(submitted.batch_id)}`)
      expectStatus(get, 200)
      const record = expectSchema(contractBatchSchema, expectJson(get), 'the batch record')
      records.push(record)
      // Done when the counts say so, or when every listed sub-task has ended (counts checked apart).
      if (record.completed + record.failed >= record.total) break
      if (record.tasks.length > 0 && record.tasks.every((t) => t.status === 'completed' || t.status === 'failed')) break
      if (Date.now() > deadline) fail(`batch ${submitted.batch_id} not finished after ${ctx.taskTimeoutMs} ms: ${JSON.stringify(record)}`)
      // The batch has no long poll of its own: where tasks have one, wait on an unfinished sub-task.
      const unfinished = record.tasks.find((t) => t.status !== 'completed' && t.status !== 'failed')
      if (unfinished) await getTask(ctx, unfinished.task_id, longPoll(ctx))
      if (!unfinished || !longPoll(ctx)) await new Promise((resolve) => setTimeout(resolve, ctx.pollIntervalMs))
    }
    return { files, submitted, records, final: records.at(-1)! }
  }
}

const needs = { endpoint: 'batch' } as const

/** A draco batch of `count` copies of the small mesh, named `conformance-<tag>-<i>.glb`. */
async function submitSmallBatch(ctx: RunContext, count: number, tag: string) {
  const { small } = await ctx.fixtures()
  const files = Array.from({ length: count }, (_, i) => ({ ...small, name: `conformance-${tag}-${i}.glb` }))
  return submit(ctx, '/batch/compress', { engine: 'draco' }, files, { fileField: 'files' })
}

/** Sections 2.4, 4.11 and 4.12: batch submission and its record. */
export const batchChecks: Check[] = [
  {
    id: 'batch.submit',
    group: 'batch',
    title: 'POST /batch/compress with 3 files answers batch_id, total 3 and one pending task per file',
    profile: 'core',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      const { files, submitted } = await batchRun(ctx)
      expect(submitted.total === FILES, `total is ${submitted.total}, ${FILES} files were sent`)
      expect(submitted.tasks.length === FILES, `${submitted.tasks.length} tasks listed, ${FILES} files were sent`)
      expect(new Set(submitted.tasks.map((t) => t.task_id)).size === FILES, 'task ids are not distinct')
      // The contract does not say the list keeps the upload order; only that each file has its task.
      const names = submitted.tasks.map((t) => t.filename).sort()
      expect(
        JSON.stringify(names) === JSON.stringify(files.map((f) => f.name).sort()),
        `task filenames ${JSON.stringify(names)} are not the uploaded ones`,
      )
    },
  },
  {
    id: 'batch.record',
    group: 'batch',
    title: "GET /batch/{id}: the record's counts add up while it runs and reach total completed",
    profile: 'core',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      const { submitted, records, final } = await batchRun(ctx)
      for (const record of records) {
        expect(record.batch_id === submitted.batch_id, `batch_id ${record.batch_id} is not ${submitted.batch_id}`)
        expect(
          record.total === FILES && record.tasks.length === FILES,
          `total ${record.total} / ${record.tasks.length} tasks, expected ${FILES}`,
        )
        expect(record.completed + record.failed <= record.total, `completed + failed exceeds total: ${JSON.stringify(record)}`)
        const done = record.tasks.filter((t) => t.status === 'completed').length
        const failed = record.tasks.filter((t) => t.status === 'failed').length
        expect(
          done === record.completed && failed === record.failed,
          `counts ${record.completed}/${record.failed} disagree with the task list (${done}/${failed})`,
        )
      }
      expect(final.completed === FILES, `the batch ended with ${final.completed} of ${FILES} completed`)
    },
  },
  {
    id: 'batch.tasks',
    group: 'batch',
    title: 'Every sub-task is an ordinary task: its record is valid and its result downloads',
    profile: 'core',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      const { submitted } = await batchRun(ctx)
      for (const item of submitted.tasks) {
        const run = await waitForTask(ctx, item.task_id, 'compress')
        checkTaskRecords(run)
        expect(run.final.status === 'completed', `sub-task ${item.task_id} ended ${run.final.status}`)
        const response = await download(ctx, item.task_id)
        expectStatus(response, 200)
        const size = (run.final.output as { size_bytes: number }).size_bytes
        expect(
          response.bytes.byteLength === size,
          `sub-task ${item.task_id}: downloaded ${response.bytes.byteLength} bytes, size_bytes ${size}`,
        )
      }
    },
  },
  {
    id: 'batch.status-values',
    group: 'batch',
    title: `The batch status is one of ${BATCH_STATUSES.join(', ')} and ends "completed" (mos)`,
    profile: 'mos',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      const { records, final } = await batchRun(ctx)
      for (const record of records) expect(BATCH_STATUSES.includes(record.status as never), `status ${JSON.stringify(record.status)}`)
      expect(final.status === 'completed', `the finished batch has status ${final.status}`)
    },
  },
  {
    id: 'batch.partial-failure',
    group: 'batch',
    title: 'A batch with one broken file: that sub-task fails on its own, the other completes, the counts say 1 and 1',
    profile: 'core',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      const final = await partialBatch(ctx)
      expect(final.completed === 1 && final.failed === 1, `completed ${final.completed}, failed ${final.failed}; expected 1 and 1`)
      const broken = final.tasks.find((t) => t.filename === 'conformance-broken.glb')
      expect(broken?.status === 'failed', `the broken file's sub-task is ${broken?.status}`)
    },
  },
  {
    id: 'batch.partial-failure.status',
    group: 'batch',
    title: 'A batch with one failed and one completed sub-task ends "partially_failed" (mos)',
    profile: 'mos',
    variants: VARIANTS,
    needs,
    async run(ctx) {
      const final = await partialBatch(ctx)
      expect(final.status === 'partially_failed', `the batch ended with status ${JSON.stringify(final.status)}`)
    },
  },
  {
    id: 'limits.batch-count',
    group: 'limits',
    title: 'A batch of max_batch_count + 1 files is refused with the plan-limit status (413 in A, 402 in B)',
    profile: 'core',
    variants: VARIANTS,
    needs: { endpoint: 'batch', setting: 'maxBatchCount' },
    async run(ctx) {
      const response = await submitSmallBatch(ctx, ctx.settings.maxBatchCount! + 1, 'over')
      expectError(response, LIMIT_EXCEEDED_STATUS[ctx.variant])
    },
  },
  {
    id: 'limits.batch-count.at-limit',
    group: 'limits',
    title: 'A batch of exactly max_batch_count files is accepted',
    profile: 'core',
    variants: VARIANTS,
    needs: { endpoint: 'batch', setting: 'maxBatchCount' },
    async run(ctx) {
      expectStatus(await submitSmallBatch(ctx, ctx.settings.maxBatchCount!, 'at'), 200)
    },
  },
]
