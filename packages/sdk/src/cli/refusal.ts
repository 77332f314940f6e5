import type { CliIO } from './main.ts'

/**
 * Whether the command line asks for `--json`, read from the words themselves: a refused command
 * line (an unknown option, a bad value) is never parsed, yet a script that asked for JSON still
 * parses stdout. Words after `--` are files, not options.
 */
export function asksForJson(argv: string[]): boolean {
  const end = argv.indexOf('--')
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json')
}

/**
 * The `--json` document of a run refused before any file was sent: the run's own shape
 * (`{ ok, results }`), not ok, with no result and the refusal as `error`, as a failed file says its own.
 * @example refusalDocument('convert needs --to FORMAT') // { ok: false, error: 'convert needs --to FORMAT', results: [] }
 */
export function refusalDocument(message: string): { ok: false; error: string; results: [] } {
  return { ok: false, error: message, results: [] }
}

/**
 * Refuses the run (exit status 2): the reason on stderr, with `hint` under it, and with `--json` the
 * refusal's document on stdout too, so stdout holds JSON whatever the outcome.
 */
export function refuse(io: Pick<CliIO, 'stdout' | 'stderr'>, message: string, json: boolean, hint?: string): number {
  io.stderr.write(`mos: ${message}\n${hint === undefined ? '' : `${hint}\n`}`)
  if (json) io.stdout.write(`${JSON.stringify(refusalDocument(message), null, 2)}\n`)
  return 2
}
