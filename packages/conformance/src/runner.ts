import type { Variant } from '@mos/sdk/contract'
import { CheckFailure, CheckSkip, REQUIRED_PROFILE, type Check, type CheckResult, type Profile, type Settings } from './check.ts'
import { createRunContext, endpointUnavailable, featureUnavailable, type RunContext } from './context.ts'
import { createHttp, TransportError, type HttpClient } from './http.ts'
import { ALL_CHECKS } from './checks/index.ts'

export interface SuiteOptions {
  baseUrl: string
  apiKey: string
  variant: Variant
  /** Profiles to run; default core only. */
  profiles?: readonly Profile[]
  /** Id patterns (`*` wildcards; a plain word also matches every id below it: `compress` → `compress.*`). */
  include?: readonly string[]
  exclude?: readonly string[]
  settings?: Settings
  /** Skips in the required profile become failures. */
  certify?: boolean
  /** Checks run at the same time (those marked `last` run alone at the end). */
  concurrency?: number
  taskTimeoutMs?: number
  pollIntervalMs?: number
  /** The checks to choose from (tests pass their own). */
  checks?: readonly Check[]
  onResult?: (result: CheckResult) => void
}

export interface SuiteReport {
  baseUrl: string
  variant: Variant
  profiles: Profile[]
  certify: boolean
  startedAt: string
  durationMs: number
  results: CheckResult[]
  summary: { total: number; pass: number; fail: number; skip: number }
  requests: number
  throttledMs: number
}

/** A problem with the run itself, not with the deployment: bad flags, unreachable base URL. */
export class HarnessError extends Error {
  override name = 'HarnessError'
}

function matches(pattern: string, id: string): boolean {
  if (pattern.includes('*')) {
    const regex = new RegExp(
      `^${pattern
        .split('*')
        .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
    )
    return regex.test(id)
  }
  return id === pattern || id.startsWith(`${pattern}.`)
}

/** The checks a run would execute, in order, for a variant, profiles and patterns. */
export function selectChecks(options: Pick<SuiteOptions, 'variant' | 'profiles' | 'include' | 'exclude' | 'checks'>): Check[] {
  const profiles = options.profiles ?? [REQUIRED_PROFILE]
  const selected = (options.checks ?? ALL_CHECKS).filter(
    (check) =>
      check.variants.includes(options.variant) &&
      profiles.includes(check.profile) &&
      (!options.include?.length || options.include.some((p) => matches(p, check.id))) &&
      !options.exclude?.some((p) => matches(p, check.id)),
  )
  return [...selected.filter((c) => !c.last), ...selected.filter((c) => c.last)]
}

const SETTING_FLAGS: Record<keyof Settings, string> = {
  rateLimit: '--rate-limit N (requests per minute per key)',
  maxFileSizeMb: '--max-file-size-mb N (the upload limit; a file just over it is sent)',
  maxBatchCount: '--max-batch-count N (files per batch)',
}

async function whyUnavailable(ctx: RunContext, check: Check): Promise<string | undefined> {
  const needs = check.needs
  if (!needs) return undefined
  if (needs.setting && ctx.settings[needs.setting] === undefined) return `needs ${SETTING_FLAGS[needs.setting]}`
  if (needs.feature) {
    const why = await featureUnavailable(ctx, needs.feature)
    if (why) return why
  }
  if (needs.endpoint) return endpointUnavailable(ctx, needs.endpoint)
  return undefined
}

async function runOne(ctx: RunContext, check: Check, certify: boolean): Promise<CheckResult> {
  const started = Date.now()
  const result = (outcome: CheckResult['outcome'], message?: string): CheckResult => ({
    id: check.id,
    group: check.group,
    title: check.title,
    profile: check.profile,
    outcome,
    ...(message ? { message } : {}),
    durationMs: Date.now() - started,
  })
  const skipped = (reason: string) =>
    certify && check.profile === REQUIRED_PROFILE ? result('fail', `skipped, and --certify requires it: ${reason}`) : result('skip', reason)
  try {
    const why = await whyUnavailable(ctx, check)
    if (why) return skipped(why)
    const note = await check.run(ctx)
    return result('pass', note || undefined)
  } catch (error) {
    if (error instanceof CheckSkip) return skipped(error.message)
    if (error instanceof CheckFailure || error instanceof TransportError) return result('fail', error.message)
    return result('fail', `the check could not complete: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
  }
}

/**
 * Runs the selected checks against a deployment. Throws HarnessError when the deployment cannot be
 * reached at all; everything else becomes a check result.
 */
export async function runSuite(options: SuiteOptions): Promise<SuiteReport> {
  const started = Date.now()
  const http: HttpClient = createHttp({ baseUrl: options.baseUrl, apiKey: options.apiKey })
  const ctx = createRunContext({
    variant: options.variant,
    http,
    settings: options.settings ?? {},
    ...(options.taskTimeoutMs ? { taskTimeoutMs: options.taskTimeoutMs } : {}),
    ...(options.pollIntervalMs ? { pollIntervalMs: options.pollIntervalMs } : {}),
  })
  try {
    await http.get('/health', { key: null })
  } catch (error) {
    throw new HarnessError(`cannot reach ${options.baseUrl}: ${error instanceof Error ? error.message : String(error)}`)
  }
  const checks = selectChecks(options)
  const results: CheckResult[] = new Array(checks.length)
  const certify = options.certify ?? false
  const concurrency = Math.max(1, options.concurrency ?? 4)
  const ordinary = checks.map((check, index) => ({ check, index })).filter(({ check }) => !check.last)
  const last = checks.map((check, index) => ({ check, index })).filter(({ check }) => check.last)
  let next = 0
  const worker = async () => {
    while (next < ordinary.length) {
      const { check, index } = ordinary[next++]!
      results[index] = await runOne(ctx, check, certify)
      options.onResult?.(results[index])
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, ordinary.length) }, worker))
  for (const { check, index } of last) {
    results[index] = await runOne(ctx, check, certify)
    options.onResult?.(results[index])
  }
  const count = (outcome: CheckResult['outcome']) => results.filter((r) => r.outcome === outcome).length
  return {
    baseUrl: options.baseUrl,
    variant: options.variant,
    profiles: [...(options.profiles ?? [REQUIRED_PROFILE])],
    certify,
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    results,
    summary: { total: results.length, pass: count('pass'), fail: count('fail'), skip: count('skip') },
    requests: http.stats.requests,
    throttledMs: http.stats.throttledMs,
  }
}
