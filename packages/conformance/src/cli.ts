import { writeFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { VARIANTS, type Variant } from '@mos/sdk/contract'
import { PROFILES, type Profile, type Settings } from './check.ts'
import { formatResult, formatSummary } from './report/console.ts'
import { toJsonReport } from './report/json.ts'
import { toJunitXml } from './report/junit.ts'
import { HarnessError, runSuite, selectChecks } from './runner.ts'

export const EXIT = { ok: 0, failures: 1, harness: 2 } as const

const USAGE = `Usage: mos-conformance --base-url URL --api-key KEY --variant A|B [options]

Checks a Mos deployment against variant A or B of the HTTP interface.

  --base-url URL           the deployment (env MOS_BASE_URL), e.g. http://localhost:8080
  --api-key KEY            an API key of the deployment (env MOS_API_KEY)
  --variant A|B            the variant the deployment serves
  --profile LIST           core (the contract, default), mos (documented Mos decisions), all
  --include PATTERN        only checks whose id matches (repeatable, comma-separated; * wildcards)
  --exclude PATTERN        leave out matching checks
  --report junit=FILE,json=FILE   write reports
  --certify                skipped checks of the core profile count as failures
  --list                   print the selected checks and exit
  --rate-limit N           the deployment's requests per minute per key (variant A, enables 429 checks)
  --max-file-size-mb N     the deployment's upload limit (enables 413/402 checks; uploads N MB + 64 KiB)
  --max-batch-count N      the deployment's batch limit (enables the batch-limit check)
  --concurrency N          checks run at once (default 4)
  --task-timeout SECONDS   longest wait for one task (default 120)
  --quiet                  print failures and the summary only

Exit status: 0 every selected check passed (or skipped), 1 a check failed, 2 bad flags or an
unreachable deployment.`

interface Output {
  out: (line: string) => void
  err: (line: string) => void
}

const CONSOLE: Output = { out: (line) => process.stdout.write(`${line}\n`), err: (line) => process.stderr.write(`${line}\n`) }

class UsageError extends Error {}

const list = (values: string[] | undefined) =>
  (values ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean)

function positiveInt(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${name} must be a positive integer, got "${value}"`)
  return n
}

const OPTIONS = {
  'base-url': { type: 'string' },
  'api-key': { type: 'string' },
  variant: { type: 'string' },
  profile: { type: 'string', multiple: true },
  include: { type: 'string', multiple: true },
  exclude: { type: 'string', multiple: true },
  report: { type: 'string', multiple: true },
  certify: { type: 'boolean' },
  list: { type: 'boolean' },
  'rate-limit': { type: 'string' },
  'max-file-size-mb': { type: 'string' },
  'max-batch-count': { type: 'string' },
  concurrency: { type: 'string' },
  'task-timeout': { type: 'string' },
  quiet: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const

type Values = ReturnType<typeof parseArgs<{ args: string[]; strict: true; allowPositionals: false; options: typeof OPTIONS }>>['values']
type Selection = Parameters<typeof selectChecks>[0]

/** Runs the CLI with `argv` (without node and script); returns the exit status. */
export async function main(
  argv: string[],
  output: Output = CONSOLE,
  env: Record<string, string | undefined> = process.env,
): Promise<number> {
  try {
    const { values } = parseArgs({ args: argv, strict: true, allowPositionals: false, options: OPTIONS })
    if (values.help) {
      output.out(USAGE)
      return EXIT.ok
    }
    const selection = selectionOf(values)
    if (values.list) {
      for (const check of selectChecks(selection)) output.out(`${check.id}  [${check.profile}] ${check.title}`)
      return EXIT.ok
    }
    const reports = reportFiles(values)
    const report = await runSuite({
      ...selection,
      ...deploymentOf(values, env),
      certify: values.certify ?? false,
      onResult: (result) => {
        if (!values.quiet || result.outcome === 'fail') output.out(formatResult(result))
      },
    })
    output.out(formatSummary(report))
    if (reports.junit) await writeFile(reports.junit, toJunitXml(report))
    if (reports.json) await writeFile(reports.json, toJsonReport(report))
    return report.summary.fail > 0 ? EXIT.failures : EXIT.ok
  } catch (error) {
    output.err(`mos-conformance: ${errorText(error)}`)
    return EXIT.harness
  }
}

/** The checks to run: variant, profiles and patterns, refused when they select nothing. */
function selectionOf(values: Values): Selection {
  const variant = values.variant?.toUpperCase()
  if (!variant || !VARIANTS.includes(variant as Variant))
    throw new UsageError(`--variant must be A or B${values.variant ? `, got "${values.variant}"` : ''}`)
  const profileNames = list(values.profile)
  const profiles = (profileNames.length === 0 ? ['core'] : profileNames.includes('all') ? [...PROFILES] : profileNames) as Profile[]
  for (const profile of profiles) if (!PROFILES.includes(profile)) throw new UsageError(`unknown profile "${profile}" (core, mos, all)`)
  const selection = { variant: variant as Variant, profiles, include: list(values.include), exclude: list(values.exclude) }
  if (selectChecks(selection).length === 0)
    throw new UsageError(
      `no check matches --include ${selection.include.join(',') || '(all)'} for variant ${variant} and profiles ${profiles.join(',')}`,
    )
  return selection
}

/** The files of `--report junit=FILE,json=FILE`. */
function reportFiles(values: Values): { junit?: string; json?: string } {
  const reports: { junit?: string; json?: string } = {}
  for (const item of list(values.report)) {
    const [kind, file] = item.split('=', 2)
    if ((kind !== 'junit' && kind !== 'json') || !file) throw new UsageError(`--report takes junit=FILE and/or json=FILE, got "${item}"`)
    reports[kind] = file
  }
  return reports
}

/** Where the deployment is, its key, the settings it declares and how hard to drive it. */
function deploymentOf(values: Values, env: Record<string, string | undefined>) {
  const baseUrl = values['base-url'] ?? env.MOS_BASE_URL
  const apiKey = values['api-key'] ?? env.MOS_API_KEY
  if (!baseUrl) throw new UsageError('--base-url (or MOS_BASE_URL) is required')
  if (!/^https?:\/\/[^/]+/.test(baseUrl)) throw new UsageError(`--base-url must be an http(s) URL, got "${baseUrl}"`)
  if (!apiKey) throw new UsageError('--api-key (or MOS_API_KEY) is required')
  const settings: Settings = {}
  const rateLimit = positiveInt('rate-limit', values['rate-limit'])
  const maxFileSizeMb = positiveInt('max-file-size-mb', values['max-file-size-mb'])
  const maxBatchCount = positiveInt('max-batch-count', values['max-batch-count'])
  if (rateLimit) settings.rateLimit = rateLimit
  if (maxFileSizeMb) settings.maxFileSizeMb = maxFileSizeMb
  if (maxBatchCount) settings.maxBatchCount = maxBatchCount
  const concurrency = positiveInt('concurrency', values.concurrency)
  const taskTimeout = positiveInt('task-timeout', values['task-timeout'])
  return {
    baseUrl,
    apiKey,
    settings,
    ...(concurrency ? { concurrency } : {}),
    ...(taskTimeout ? { taskTimeoutMs: taskTimeout * 1000 } : {}),
  }
}

/** A usage error comes with the usage, a harness error alone, anything else with its stack. */
function errorText(error: unknown): string {
  if (error instanceof UsageError || (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS'))) {
    return `${error.message}\n\n${USAGE}`
  }
  if (error instanceof HarnessError) return error.message
  return error instanceof Error ? (error.stack ?? error.message) : String(error)
}
