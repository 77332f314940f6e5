import {
  completedTaskSchema,
  EXTENSION_HEADERS,
  failedTaskSchema,
  pendingTaskSchema,
  processingTaskSchema,
  submitResponseSchema,
  TASK_STATUSES,
  type TaskType,
} from '@mos/sdk/contract'
import { describeResponse, expect, expectJson, expectSchema, expectStatus } from './assert.ts'
import { fail } from './check.ts'
import type { RunContext } from './context.ts'
import type { Fixture } from './fixtures/index.ts'
import type { HttpResponse } from './http.ts'

export type Fields = Record<string, string | number | boolean>

export interface SubmitOptions {
  fileField?: string
  /** Upload under another name (e.g. an unsupported extension). */
  filename?: string
  key?: string | null
}

/** A multipart body: the files under `fileField`, then the fields. */
export function uploadForm(files: Fixture[], fields: Fields, options: SubmitOptions = {}): FormData {
  const form = new FormData()
  for (const file of files) {
    form.append(options.fileField ?? 'file', new Blob([file.bytes as Uint8Array<ArrayBuffer>]), options.filename ?? file.name)
  }
  for (const [name, value] of Object.entries(fields)) form.append(name, String(value))
  return form
}

/** POSTs a submission and returns the raw response. */
export function submit(
  ctx: RunContext,
  path: string,
  fields: Fields,
  files: Fixture[],
  options: SubmitOptions = {},
): Promise<HttpResponse> {
  return ctx.http.post(path, { form: uploadForm(files, fields, options), key: options.key })
}

/** Submits and checks the acknowledgement (200, `{task_id, status: "pending"}`); returns the id. */
export async function submitTask(ctx: RunContext, path: string, fields: Fields, file: Fixture): Promise<string> {
  const response = await submit(ctx, path, fields, [file])
  expectStatus(response, 200)
  return expectSchema(submitResponseSchema, expectJson(response), `the ${path} response`).task_id
}

export type TaskRecordLike = Record<string, unknown> & { status: string; task_id: string }

/** A task followed from submission to its end: every distinct record seen while polling. */
export interface TaskRun {
  id: string
  type: TaskType
  observed: TaskRecordLike[]
  final: TaskRecordLike
}

/**
 * How long a task read may wait on this deployment, learned from its answers' `Mos-Wait-Max` (the
 * Mos long poll; absent elsewhere). Kept under the request time-out, so a wait never times out.
 */
const longPollSeconds = new WeakMap<RunContext, number>()
const LONG_POLL_CAP_SECONDS = 30

/** How long the suite may wait on one read of a task here; undefined: poll. */
export const longPoll = (ctx: RunContext) => longPollSeconds.get(ctx)

/**
 * Reads a task record (200 JSON with a known status). With `wait`, on a deployment that advertises
 * the long poll, the read answers when the task ends or after that many seconds: one request where
 * polling would spend one per interval, which keeps a rate-limited run (variant A, 60 a minute)
 * from waiting on its limit.
 */
export async function getTask(ctx: RunContext, id: string, wait?: number): Promise<TaskRecordLike> {
  const response = await ctx.http.get(`/tasks/${encodeURIComponent(id)}${wait ? `?wait=${wait}` : ''}`)
  const advertised = Number(response.headers.get(EXTENSION_HEADERS.waitMax))
  if (Number.isInteger(advertised) && advertised > 0) longPollSeconds.set(ctx, Math.min(advertised, LONG_POLL_CAP_SECONDS))
  expectStatus(response, 200)
  const record = expectJson(response) as TaskRecordLike
  expect(record && typeof record === 'object', `task record is not an object: ${describeResponse(response)}`)
  expect(TASK_STATUSES.includes(record.status as never), `task ${id} has an unknown status ${JSON.stringify(record.status)}`)
  return record
}

/** Follows the task until it is completed or failed (long polls where advertised); fails after the task time-out. */
export async function waitForTask(ctx: RunContext, id: string, type: TaskType): Promise<TaskRun> {
  const observed: TaskRecordLike[] = []
  const deadline = Date.now() + ctx.taskTimeoutMs
  for (;;) {
    const record = await getTask(ctx, id, observed.length > 0 ? longPoll(ctx) : undefined)
    const previous = observed.at(-1)
    if (!previous || JSON.stringify(previous) !== JSON.stringify(record)) observed.push(record)
    if (record.status === 'completed' || record.status === 'failed') return { id, type, observed, final: record }
    if (Date.now() > deadline) fail(`task ${id} still ${record.status} after ${ctx.taskTimeoutMs} ms`)
    if (!longPoll(ctx)) await new Promise((resolve) => setTimeout(resolve, ctx.pollIntervalMs))
  }
}

/** Submits and follows a task once per `key` for the whole run. */
export function runTask(
  ctx: RunContext,
  key: string,
  type: TaskType,
  path: string,
  fields: Fields,
  file: Fixture | ((ctx: RunContext) => Promise<Fixture>),
): Promise<TaskRun> {
  return ctx.once(`task ${key}`, async () => {
    const fixture = typeof file === 'function' ? await file(ctx) : file
    return waitForTask(ctx, await submitTask(ctx, path, fields, fixture), type)
  })
}

/** Like runTask, but the task must complete; returns the run and its result bytes. */
export async function completedTask(...args: Parameters<typeof runTask>): Promise<TaskRun & { output: Uint8Array; filename: string }> {
  const run = await runTask(...args)
  if (run.final.status !== 'completed')
    fail(`task ${run.id} (${args[1]}) ended ${run.final.status}: ${JSON.stringify(run.final.error ?? run.final)}`)
  const response = await download(args[0], run.id)
  expectStatus(response, 200)
  const output = run.final.output as { filename?: unknown } | undefined
  return { ...run, output: response.bytes, filename: typeof output?.filename === 'string' ? output.filename : '' }
}

/** GET …/download once per task id. */
export function download(ctx: RunContext, id: string): Promise<HttpResponse> {
  return ctx.once(`download ${id}`, () => ctx.http.get(`/tasks/${encodeURIComponent(id)}/download`))
}

const STATUS_ORDER: Record<string, number> = { pending: 0, processing: 1, completed: 2, failed: 2 }
const SCHEMAS = { pending: pendingTaskSchema, processing: processingTaskSchema, completed: completedTaskSchema, failed: failedTaskSchema }

/**
 * Checks every record a task showed against section 2.1 and 3: the schema of its status (progress
 * 0..100 while processing, 100 when completed, absent when failed; ISO timestamps), statuses only
 * moving forward, progress never going back, timestamps in order. Returns a note of what was seen.
 */
export function checkTaskRecords(run: TaskRun): string {
  let lastOrder = -1
  let lastProgress = -1
  for (const record of run.observed) {
    const status = record.status as keyof typeof SCHEMAS
    expect(record.task_id === run.id, `record task_id ${JSON.stringify(record.task_id)} is not the submitted ${run.id}`)
    expectSchema(SCHEMAS[status], record, `the ${status} record of task ${run.id}`)
    // Checked on the raw record: the contract schema strips unknown keys before its own refinement.
    if (status === 'failed')
      expect(
        !('progress' in record),
        `the failed record of task ${run.id} carries progress (${JSON.stringify(record.progress)}); 2.1 says it is absent`,
      )
    if (status !== 'failed') expect(record.type === run.type, `record type ${JSON.stringify(record.type)}, expected "${run.type}"`)
    const order = STATUS_ORDER[status]!
    expect(order >= lastOrder, `status went back to ${status} after a later state`)
    lastOrder = order
    if (typeof record.progress === 'number') {
      expect(record.progress >= lastProgress, `progress went back from ${lastProgress} to ${record.progress}`)
      lastProgress = record.progress
    }
    for (const field of ['created_at', 'started_at', 'completed_at', 'failed_at']) {
      const value = record[field]
      if (typeof value === 'string') expect(/(Z|[+-]00:?00)$/.test(value), `${field} ${value} is not a UTC timestamp`)
    }
    const times = ['created_at', 'started_at', status === 'failed' ? 'failed_at' : 'completed_at']
      .map((field) => [field, record[field]] as const)
      .filter(([, value]) => typeof value === 'string')
    for (let i = 1; i < times.length; i++) {
      const [earlierName, earlier] = times[i - 1]!
      const [laterName, later] = times[i]!
      expect(Date.parse(later as string) >= Date.parse(earlier as string), `${laterName} ${later} is before ${earlierName} ${earlier}`)
    }
  }
  const first = run.observed[0]!
  return `statuses seen: ${[...new Set(run.observed.map((r) => r.status))].join(' → ')}${first ? '' : ''}`
}

/** Checks compression_ratio and savings_percent against the sizes (2.2): ratio = output / input. */
export function checkSizeFigures(record: TaskRecordLike): void {
  const output = record.output as { size_bytes: number; compression_ratio?: number; savings_percent?: number }
  const input = record.input_size_bytes as number
  expect(typeof output.compression_ratio === 'number', 'output.compression_ratio is missing')
  expect(typeof output.savings_percent === 'number', 'output.savings_percent is missing')
  if (input > 0) {
    const ratio = output.size_bytes / input
    expect(
      Math.abs(output.compression_ratio - ratio) <= Math.max(0.01 * ratio, 0.0001),
      `compression_ratio ${output.compression_ratio} is not output/input = ${output.size_bytes}/${input} = ${ratio.toFixed(4)}`,
    )
    expect(
      Math.abs(output.savings_percent - (1 - ratio) * 100) <= 0.5,
      `savings_percent ${output.savings_percent} is not (1 − ratio)·100 = ${((1 - ratio) * 100).toFixed(2)}`,
    )
  }
}
