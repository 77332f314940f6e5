import { mkdir, stat } from 'node:fs/promises'
import type { DiagnosisResult, SizeRuleReport, SubmitResponse } from '../contract/index.ts'
import { UserAbortError } from '../errors.ts'
import type { NodeClient } from '../node.ts'
import type { CliArgs, TaskCommand } from './args.ts'
import { batchTaskIds, canBatch, deploymentBatchLimit } from './batch-submit.ts'
import { outputPath, summaryLine } from './format.ts'
import { inputProblem } from './input-check.ts'
import { assertFreeTarget, knownOutputExtension, planOutputs, type OutputPlace } from './output-plan.ts'
import type { ProgressDisplay, ProgressLine } from './progress.ts'

/** A file's outcome when Ctrl-C stopped its run: its task, if one was made, goes on on the service. */
export const INTERRUPTED = 'interrupted (Ctrl-C); a task already sent keeps running on the service'

/** What `--json` prints per input file. */
export interface FileResult {
  input: string
  ok: boolean
  task_id?: string
  output?: string
  size_before: number
  size_after?: number
  ratio?: number
  seconds: number
  error?: string
  /** The diagnosis (diagnose, variant A). */
  result?: DiagnosisResult
  /** What the reader met in the input and worked around, as the task record says it. */
  warnings?: string[]
  /** What the result could not hold, or what was changed to write it. */
  notes?: string[]
  /** The result came out larger than the input: what the service did and why, as the task record says it. */
  size_rule?: SizeRuleReport
}

/** Name tag of each command's results, before the extension (`box.draco.glb`). */
function suffixOf(args: CliArgs): string {
  switch (args.command as TaskCommand) {
    case 'compress':
      return `.${args.engine}`
    case 'repair':
      return '.repaired'
    case 'textures':
      return `.${args.format === 'jpeg' ? 'jpg' : args.format}`
    case 'ktx2':
      return '.ktx2'
    case 'convert':
      // Dropped where the extension says it (box.obj); kept on a bundle, which two targets share (box.obj.zip, box.gltf.zip).
      return args.to ? `.${args.to}` : ''
    default:
      return ''
  }
}

/** One request for one file; compress options that a batch cannot carry go this way too. */
function submitOne(client: NodeClient, args: CliArgs, path: string, signal: AbortSignal): Promise<SubmitResponse> {
  const options = { signal }
  // The upload, and the webhook's URL every submit takes.
  const file = { file: path, ...(args.callbackUrl ? { callback_url: args.callbackUrl } : {}) }
  switch (args.command as TaskCommand) {
    case 'compress':
      return client.compress(
        {
          ...file,
          ...args.extensions,
          engine: args.engine,
          level: args.level,
          meshopt_compression_level: args.meshoptLevel,
          position_quantization_bits: args.bits.position,
          normal_quantization_bits: args.bits.normal,
          texcoord_quantization_bits: args.bits.texcoord,
          color_quantization_bits: args.bits.color,
          generic_quantization_bits: args.bits.generic,
        },
        options,
      )
    case 'convert': {
      // The scene steps convert takes (parseCliArgs refuses --preset, --instance and --meshopt-extension there).
      const { preset: _preset, instance: _instance, meshopt_extension: _extension, ...scene } = args.extensions
      return client.convert({ ...file, ...scene, target_format: args.to! }, options)
    }
    case 'repair':
      return client.repair(file, options)
    case 'diagnose':
      return client.diagnose(file, options)
    case 'textures':
      return client.optimizeTextures({ ...file, format: args.format!, quality: args.quality }, options)
    case 'ktx2':
      return client.encodeKtx2({ ...file, uastc: args.uastc || undefined, quality: args.quality }, options)
  }
}

/** Runs at most `limit` of the jobs at a time. */
async function inParallel<T>(jobs: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = new Array(jobs.length)
  let next = 0
  async function worker() {
    while (next < jobs.length) {
      const index = next++
      results[index] = await jobs[index]!()
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker))
  return results
}

function describeDiagnosis(result: DiagnosisResult | undefined): string {
  if (!result) return ''
  const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`
  return `  ${result.format} ${result.version}: ${count(result.meshes.length, 'mesh', 'meshes')}, ${count(result.textures.length, 'texture', 'textures')}, ${count(result.total_issues, 'issue', 'issues')}`
}

/** The task's warnings, notes and output-size rule, a line each under its summary: nothing lost without a word, in a shell too. */
function saidLines(result: FileResult): string[] {
  return [
    ...(result.warnings ?? []).map((text) => `  warning: ${text}`),
    ...(result.notes ?? []).map((text) => `  note: ${text}`),
    ...(result.size_rule ? [`  output size: ${result.size_rule.note}`] : []),
  ]
}

/**
 * Submits every file, waits with a progress line per task, downloads each result beside its input
 * (or into `--out`) and finishes each line with a summary. A file the CLI can judge unsendable
 * (`inputProblem`) fails alone before anything is sent; several compress files go in batches of the
 * deployment's size, each file getting its own outcome (`batchTaskIds`). Never throws for one file's failure;
 * throws a UsageError before uploading anything when two results would share a file, or when a
 * result whose name is known up front (compress, convert) would replace a file without `--force`.
 */
export async function runTasks(
  client: NodeClient,
  args: CliArgs,
  display: ProgressDisplay,
  signal: AbortSignal,
  concurrency: number,
): Promise<FileResult[]> {
  const places = args.command === 'diagnose' ? [] : planOutputs(args.files, args.outDir)
  const run: TaskRun = { client, args, signal, suffix: suffixOf(args), places }
  const known = knownOutputExtension(args.command, args.to)
  if (known) {
    for (const [index, file] of args.files.entries())
      await assertFreeTarget(outputPath(file, `result${known}`, run.suffix, places[index]), args.files, args.force)
  }
  if (args.outDir) await mkdir(args.outDir, { recursive: true })
  const lines = new Map<string, ProgressLine>()
  const lineOf = (file: string, index: number) => {
    const key = `${index}`
    if (!lines.has(key)) lines.set(key, display.add(file))
    return lines.get(key)!
  }
  // What the CLI can judge itself fails alone, before anything is sent (and is kept out of a batch).
  const problems = await Promise.all(args.files.map((file) => inputProblem(args.command as TaskCommand, file)))
  const results: FileResult[] = new Array(args.files.length)
  const sendable: number[] = []
  for (const [index, problem] of problems.entries()) {
    const file = args.files[index]!
    if (problem === undefined) sendable.push(index)
    else {
      lineOf(file, index).finish(`${file}: ${problem}`, false)
      results[index] = { input: file, ok: false, size_before: 0, seconds: 0, error: problem }
    }
  }
  const submitFile = async (file: string) => (await submitOne(client, args, file, signal)).task_id
  if (canBatch(args, sendable.length)) {
    for (const index of sendable) lineOf(args.files[index]!, index)
    const limit = await deploymentBatchLimit(client, signal)
    const files = sendable.map((index) => args.files[index]!)
    const taskIdOf = batchTaskIds(files, { client, args, signal, limit, concurrency, submitOne: submitFile })
    await Promise.all(
      sendable.map(async (index, position) => {
        results[index] = await runOne(run, files[position]!, index, lineOf(files[position]!, index), () => taskIdOf(position))
      }),
    )
    return results
  }
  await inParallel(
    sendable.map((index) => async () => {
      const file = args.files[index]!
      results[index] = await runOne(run, file, index, lineOf(file, index), () => submitFile(file))
    }),
    concurrency,
  )
  return results
}

/** What every file's run shares. */
interface TaskRun {
  client: NodeClient
  args: CliArgs
  signal: AbortSignal
  /** What the downloaded result's name adds to the input's stem. */
  suffix: string
  /** Each input's result place (planOutputs), by the input's index. */
  places: OutputPlace[]
}

/** One file: submit, wait with progress, download (or keep the diagnosis), and finish its line. */
async function runOne(run: TaskRun, file: string, index: number, line: ProgressLine, submit: () => Promise<string>): Promise<FileResult> {
  const { client, args, signal } = run
  const started = Date.now()
  let before = 0
  let taskId: string | undefined
  try {
    before = (await stat(file)).size
    taskId = await submit()
    const task = await client.waitForTask(taskId, {
      signal,
      timeoutMs: args.timeoutMs,
      onProgress: (record) => line.update(record.status, record.status === 'completed' ? 100 : 'progress' in record ? record.progress : 0),
    })
    if (task.status === 'failed') throw new Error(task.error)
    const result: FileResult = { input: file, ok: true, task_id: taskId, size_before: before, seconds: 0 }
    if (args.command === 'diagnose') {
      result.result = task.result
    } else {
      const target = outputPath(file, task.output.filename, run.suffix, run.places[index])
      // Checked again now that the server named the output: its extension may differ from the guess.
      await assertFreeTarget(target, args.files, args.force)
      line.update('downloading', 100)
      const { bytes } = await client.downloadToFile(taskId, target, { signal })
      Object.assign(result, { output: target, size_after: bytes, ratio: before > 0 ? bytes / before : undefined })
    }
    result.seconds = (Date.now() - started) / 1000
    if (task.warnings?.length) result.warnings = task.warnings
    if (task.notes?.length) result.notes = task.notes
    if (task.size_rule) result.size_rule = task.size_rule
    const summary = summaryLine(file, result.output, before, result.size_after, Date.now() - started) + describeDiagnosis(result.result)
    line.finish([summary, ...saidLines(result)].join('\n'), true)
    return result
  } catch (error) {
    // The run's signal is Ctrl-C's: the SDK's words for it ('request aborted by the caller') speak to a program.
    const message = error instanceof UserAbortError ? INTERRUPTED : (error as Error).message
    line.finish(`${file}: ${message}`, false)
    return { input: file, ok: false, task_id: taskId, size_before: before, seconds: (Date.now() - started) / 1000, error: message }
  }
}
