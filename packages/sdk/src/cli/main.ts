// `mos`: the command line on the SDK. See `mos --help` and docs/sdk.md.
import { setMaxListeners } from 'node:events'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createClient } from '../node.ts'
import { CLI_DEFAULTS, type CliArgs, NO_COMMAND, parseCliArgs, USAGE, UsageError } from './args.ts'
import { createPlainProgress, createSilentProgress, createTerminalProgress } from './progress.ts'
import { asksForJson, refuse } from './refusal.ts'
import { runTasks } from './run-tasks.ts'
import { parseTasksArgs, runTasksCommand, TASKS_USAGE } from './task-control.ts'
import { findServer, serve, SERVER_MISSING } from './serve.ts'
import { SDK_VERSION } from './version.ts'

/** The process surroundings, passed in so tests can run the CLI in-process too. */
export interface CliIO {
  argv: string[]
  env: Record<string, string | undefined>
  stdout: { write(text: string): unknown; isTTY?: boolean }
  stderr: { write(text: string): unknown }
  signal: AbortSignal
}

/**
 * Runs the CLI and resolves with the exit status (0 all good, 1 a failure, 2 usage).
 * @example process.exitCode = await runCli({ argv: process.argv.slice(2), env: process.env, stdout: process.stdout, stderr: process.stderr, signal })
 */
export async function runCli(io: CliIO): Promise<number> {
  if (io.argv[0] === 'tasks') return runTasksCli(io)
  let args: CliArgs
  try {
    args = parseCliArgs(io.argv, io.env)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    // No command at all: the usage is the answer, on stderr as for any usage error.
    const hint = error.message === NO_COMMAND ? `\n${USAGE}` : 'Run `mos --help` for usage.'
    return refuse(io, error.message, asksForJson(io.argv), hint)
  }
  if (args.command === 'help') {
    io.stdout.write(`${USAGE}\n`)
    return 0
  }
  if (args.command === 'version') {
    io.stdout.write(`${SDK_VERSION}\n`)
    return 0
  }
  if (args.command === 'serve') return runServe(args, io)
  return runTaskCommand(args, io)
}

/** `mos serve`: the @mos/server package's entry, found beside this one or under the working folder. */
function runServe(args: CliArgs, io: CliIO): Promise<number> | number {
  const location = findServer(dirname(fileURLToPath(import.meta.url))) ?? findServer(process.cwd())
  if (!location) {
    io.stderr.write(`${SERVER_MISSING}\n`)
    return 1
  }
  return serve(location, args.rest, io.env as NodeJS.ProcessEnv)
}

/** A task command: its files sent, waited for and saved, each outcome shown (or printed as one JSON document). */
async function runTaskCommand(args: CliArgs, io: CliIO): Promise<number> {
  const client = createClient({ baseURL: args.baseURL, apiKey: args.apiKey, timeout: args.requestTimeoutMs })
  const display = args.json
    ? createSilentProgress()
    : io.stdout.isTTY
      ? createTerminalProgress(io.stdout)
      : createPlainProgress(io.stderr, io.stdout)
  let results
  try {
    results = await runTasks(client, args, display, io.signal, CLI_DEFAULTS.concurrency)
  } catch (error) {
    // Refused before anything was uploaded (two results under one name, a file in the way).
    if (!(error instanceof UsageError)) throw error
    return refuse(io, error.message, args.json)
  }
  const ok = results.every((result) => result.ok)
  if (args.json) io.stdout.write(`${JSON.stringify({ ok, results }, null, 2)}\n`)
  return ok ? 0 : 1
}

/** `mos tasks list|cancel|delete` (task control, a Mos extension): its own options, see `TASKS_USAGE`. */
async function runTasksCli(io: CliIO): Promise<number> {
  let args
  try {
    if (io.argv.includes('--help') || io.argv.includes('-h')) {
      io.stdout.write(`${TASKS_USAGE}\n`)
      return 0
    }
    args = parseTasksArgs(io.argv.slice(1), io.env)
  } catch (error) {
    if (!(error instanceof UsageError) && !(error instanceof TypeError)) throw error
    return refuse(io, error.message, asksForJson(io.argv), 'Run `mos tasks --help` for usage.')
  }
  return runTasksCommand(createClient({ baseURL: args.baseURL, apiKey: args.apiKey, timeout: args.requestTimeoutMs }), args, io)
}

/** Runs the CLI on this process: argv, environment, Ctrl-C (exit 130) and the exit status. */
export function runFromProcess(): void {
  const controller = new AbortController()
  // Every request and wait of the run listens to this one signal, a batch's files all at once: its
  // listeners grow with the files given, by design, past the ten after which Node warns of a leak.
  setMaxListeners(0, controller.signal)
  process.once('SIGINT', () => controller.abort())
  runCli({ argv: process.argv.slice(2), env: process.env, stdout: process.stdout, stderr: process.stderr, signal: controller.signal }).then(
    (code) => {
      process.exitCode = controller.signal.aborted ? 130 : code
    },
    (error: unknown) => {
      process.stderr.write(`mos: ${(error as Error).stack ?? error}\n`)
      process.exitCode = 1
    },
  )
}
