import { type BatchSubmitResponse, parseBatchCompressFields } from '../contract/index.ts'
import { BadRequestError, type NodeClient, NotFoundError, PayloadTooLargeError, PaymentRequiredError } from '../node.ts'
import type { CliArgs } from './args.ts'

/**
 * Whether `count` files of this command go as batches: compress with more than one file, nothing a
 * batch cannot carry (Draco bits, the meshopt level, Mos's extension fields), and engine and level
 * within the batch endpoint's own rules: its level is 1–10 in both variants, where B's single compress
 * takes 0 (no compression), so `-l 0` goes one request per file.
 */
export function canBatch(args: CliArgs, count: number): boolean {
  return (
    args.command === 'compress' &&
    count > 1 &&
    !args.meshoptLevel &&
    Object.values(args.bits).every((bits) => bits === undefined) &&
    Object.keys(args.extensions).length === 0 &&
    parseBatchCompressFields({ engine: args.engine, level: args.level === undefined ? undefined : String(args.level) }).ok
  )
}

/**
 * The deployment's batch limit (files per batch request), when it says one: variant A's license info
 * has `limits.max_batch_count` (-1: unlimited). Undefined when unlimited or unknown (variant B's
 * documents carry no number, or the request failed): the batch is then sent whole, and a refusal falls
 * back to one request per file (`batchTaskIds`). Asked once, without retries: it only sizes the batches.
 */
export async function deploymentBatchLimit(client: NodeClient, signal: AbortSignal): Promise<number | undefined> {
  try {
    const info: unknown = await client.licenseInfo({ signal, maxRetries: 0 })
    const limit = (info as { limits?: { max_batch_count?: unknown } } | undefined)?.limits?.max_batch_count
    return typeof limit === 'number' && Number.isInteger(limit) && limit >= 1 ? limit : undefined
  } catch {
    return undefined
  }
}

/**
 * `files` in consecutive groups of at most `limit`, as even as can be (6 files at 5: 3 and 3, so both
 * go as batches rather than 5 and a lone file).
 * @example splitEvenly(['a', 'b', 'c', 'd', 'e', 'f'], 5) // [['a', 'b', 'c'], ['d', 'e', 'f']]
 */
export function splitEvenly<T>(files: readonly T[], limit: number | undefined): T[][] {
  if (files.length === 0) return []
  const groups = limit === undefined ? 1 : Math.ceil(files.length / limit)
  const size = Math.floor(files.length / groups)
  const larger = files.length % groups
  const result: T[][] = []
  let start = 0
  for (let group = 0; group < groups; group++) {
    const end = start + size + (group < larger ? 1 : 0)
    result.push(files.slice(start, end))
    start = end
  }
  return result
}

/**
 * A refusal of the whole batch that one request per file can answer file by file: a part the service
 * will not take (400), a limit on the batch, a file or the trial (402, 413), no batch endpoint (404).
 * Not 401 (the same key fails every file alike), nor 429 and 5xx, which the client already retried.
 */
function refusedAsAWhole(error: unknown): boolean {
  return (
    error instanceof BadRequestError ||
    error instanceof PaymentRequiredError ||
    error instanceof PayloadTooLargeError ||
    error instanceof NotFoundError
  )
}

/** Runs at most `limit` of the calls at a time, in the order they come. */
function createLimiter(limit: number): <T>(job: () => Promise<T>) => Promise<T> {
  let running = 0
  const waiting: (() => void)[] = []
  return async (job) => {
    if (running >= limit) await new Promise<void>((resume) => waiting.push(resume))
    running++
    try {
      return await job()
    } finally {
      running--
      waiting.shift()?.()
    }
  }
}

/** What `batchTaskIds` needs to send. */
export interface BatchSubmitOptions {
  client: NodeClient
  args: CliArgs
  signal: AbortSignal
  /** Files per batch request (the deployment's limit); undefined: all in one. */
  limit: number | undefined
  /** Uploads at a time when files go one by one. */
  concurrency: number
  /** One request for one file, answering its task id. */
  submitOne: (file: string) => Promise<string>
}

/**
 * Submits `files` in batches of at most `limit`, one batch request at a time; answers each file's task
 * id by its position in `files`. A batch refused as a whole (`refusedAsAWhole`) is sent again one
 * request per file, so each file gets its own outcome instead of sharing one refusal; a group of one
 * file is sent so from the start.
 */
export function batchTaskIds(files: readonly string[], options: BatchSubmitOptions): (position: number) => Promise<string> {
  const { client, args, signal } = options
  const single = createLimiter(options.concurrency)
  const groups = splitEvenly(
    files.map((file, position) => ({ file, position })),
    options.limit,
  )
  const groupOf: number[] = []
  for (const [group, members] of groups.entries()) for (const member of members) groupOf[member.position] = group
  // One batch upload at a time: each waits for the previous answer (whatever it was).
  let previous: Promise<unknown> = Promise.resolve()
  const answers = groups.map((members) => {
    const answer: Promise<BatchSubmitResponse | undefined> = previous.then(() =>
      members.length < 2
        ? undefined
        : client
            .batchCompress(
              {
                files: members.map((member) => member.file),
                engine: args.engine,
                level: args.level,
                ...(args.callbackUrl ? { callback_url: args.callbackUrl } : {}),
              },
              { signal },
            )
            .catch((error: unknown) => {
              if (refusedAsAWhole(error)) return undefined
              throw error
            }),
    )
    previous = answer.catch(() => undefined)
    return answer
  })
  return async (position) => {
    const group = groupOf[position]!
    const answer = await answers[group]!
    const file = files[position]!
    if (!answer) return single(() => options.submitOne(file))
    // Sub-tasks come back in upload order; match by name too in case a server reorders them.
    const index = groups[group]!.findIndex((member) => member.position === position)
    const name = file.split(/[\\/]/).pop()
    const byIndex = answer.tasks[index]
    const task = byIndex && byIndex.filename === name ? byIndex : (answer.tasks.find((t) => t.filename === name) ?? byIndex)
    if (!task) throw new Error('the batch answer lists no task for this file')
    return task.task_id
  }
}
