// `mos tasks list|cancel|delete`: task control (a Mos extension) from a shell.
import { parseArgs } from 'node:util'
import type { Client } from '../client.ts'
import { TASK_LIST_MAX_LIMIT, TASK_STATUSES, TASK_TYPES, type TaskRecord } from '../contract/index.ts'
import { MosError } from '../errors.ts'
import { baseURLOf, requestTimeoutOf, UsageError } from './args.ts'
import type { CliIO } from './main.ts'
import { refusalDocument } from './refusal.ts'

export const TASKS_USAGE = `Usage: mos tasks list [--status S] [--type T] [--batch ID] [--max N] [--json]
       mos tasks cancel TASK_ID... [--json]
       mos tasks delete TASK_ID... [--json]

  list     the key's tasks, newest first (--max: at most N, default ${TASK_LIST_MAX_LIMIT}; 0 for all)
  cancel   stop pending or processing tasks (they end failed with the error "cancelled")
  delete   remove tasks: record and files (a running task is cancelled first)
Also: --base-url URL (env MOS_BASE_URL), --api-key KEY (env MOS_API_KEY),
      --request-timeout SEC (env MOS_REQUEST_TIMEOUT: fail a request without progress for SEC s; default 120, 0: never).`

/** What a `mos tasks` command line asks for. */
export interface TasksArgs {
  action: 'list' | 'cancel' | 'delete'
  ids: string[]
  baseURL: string
  apiKey: string | undefined
  /** The SDK client's `timeout` in ms (undefined: its default). */
  requestTimeoutMs?: number
  json: boolean
  max: number
  status?: (typeof TASK_STATUSES)[number]
  type?: (typeof TASK_TYPES)[number]
  batchId?: string
}

/** Parses the arguments after `mos tasks`. */
export function parseTasksArgs(argv: string[], env: Record<string, string | undefined>): TasksArgs {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'base-url': { type: 'string' },
      'api-key': { type: 'string' },
      json: { type: 'boolean', default: false },
      status: { type: 'string' },
      type: { type: 'string' },
      batch: { type: 'string' },
      max: { type: 'string' },
      'request-timeout': { type: 'string' },
    },
  })
  const [action, ...ids] = positionals
  if (action !== 'list' && action !== 'cancel' && action !== 'delete')
    throw new UsageError(`mos tasks takes list, cancel or delete, not "${action ?? ''}"`)
  if (action !== 'list' && ids.length === 0) throw new UsageError(`mos tasks ${action} needs at least one task id`)
  const choose = <T extends string>(name: string, value: string | undefined, allowed: readonly T[]) => {
    if (value !== undefined && !allowed.includes(value as T))
      throw new UsageError(`--${name} must be one of ${allowed.join(', ')}, not "${value}"`)
    return value as T | undefined
  }
  if (values.max !== undefined && !/^\d+$/.test(values.max)) throw new UsageError(`--max takes an integer, not "${values.max}"`)
  const status = choose('status', values.status, TASK_STATUSES)
  const type = choose('type', values.type, TASK_TYPES)
  return {
    action,
    ids,
    baseURL: baseURLOf(values['base-url'], env),
    apiKey: values['api-key'] ?? env.MOS_API_KEY,
    requestTimeoutMs: requestTimeoutOf(values['request-timeout'], env),
    json: values.json ?? false,
    max: values.max === undefined ? TASK_LIST_MAX_LIMIT : Number(values.max),
    ...(status ? { status } : {}),
    ...(type ? { type } : {}),
    ...(values.batch ? { batchId: values.batch } : {}),
  }
}

const line = (task: TaskRecord) =>
  [task.task_id, task.status, 'type' in task ? task.type : '', task.created_at, 'error' in task ? task.error : ''].join('\t').trimEnd()

/**
 * Runs `mos tasks …` and resolves with the exit status (0 all good, 1 a request failed). With `--json`
 * stdout holds one document whatever the outcome: `list`, the array of records, or the refusal
 * document when the listing failed (a wrong key, the service away); `cancel` and `delete`, the
 * run's shape, `{ ok, results }`, a result per id.
 */
export async function runTasksCommand(client: Client, args: TasksArgs, io: Pick<CliIO, 'stdout' | 'stderr' | 'signal'>): Promise<number> {
  if (args.action === 'list') return listTasks(client, args, io)
  const results: TaskIdResult[] = []
  for (const id of args.ids) {
    try {
      const answer =
        args.action === 'cancel' ? await client.cancelTask(id, { signal: io.signal }) : await client.deleteTask(id, { signal: io.signal })
      results.push({ input: id, ok: true, result: answer })
      if (!args.json) io.stdout.write(`${args.action === 'cancel' ? line(answer as TaskRecord) : `${id}\tdeleted`}\n`)
    } catch (error) {
      if (!(error instanceof MosError)) throw error
      results.push({ input: id, ok: false, error: error.message })
      io.stderr.write(`mos: ${id}: ${error.message}\n`)
    }
  }
  const ok = results.every((result) => result.ok)
  if (args.json) io.stdout.write(`${JSON.stringify({ ok, results }, null, 2)}\n`)
  return ok ? 0 : 1
}

/** What `cancel` or `delete` did with one task id, in the `--json` document. */
type TaskIdResult = { input: string; ok: true; result: unknown } | { input: string; ok: false; error: string }

/** `mos tasks list`: newest first, at most `--max`; a failed request fails the run (exit status 1). */
async function listTasks(client: Client, args: TasksArgs, io: Pick<CliIO, 'stdout' | 'stderr' | 'signal'>): Promise<number> {
  const filters = {
    ...(args.status ? { status: args.status } : {}),
    ...(args.type ? { type: args.type } : {}),
    ...(args.batchId ? { batch_id: args.batchId } : {}),
  }
  const listed: TaskRecord[] = []
  const limit = args.max === 0 ? TASK_LIST_MAX_LIMIT : Math.min(args.max, TASK_LIST_MAX_LIMIT)
  try {
    for await (const page of client.listTasks({ ...filters, limit }, { signal: io.signal })) {
      listed.push(...page.tasks)
      if (args.max > 0 && listed.length >= args.max) break
    }
  } catch (error) {
    if (!(error instanceof MosError)) throw error
    io.stderr.write(`mos: ${error.message}\n`)
    if (args.json) io.stdout.write(`${JSON.stringify(refusalDocument(error.message), null, 2)}\n`)
    return 1
  }
  const tasks = args.max > 0 ? listed.slice(0, args.max) : listed
  if (args.json) io.stdout.write(`${JSON.stringify(tasks)}\n`)
  else for (const task of tasks) io.stdout.write(`${line(task)}\n`)
  return 0
}
