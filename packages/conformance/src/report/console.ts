import type { CheckResult } from '../check.ts'
import type { SuiteReport } from '../runner.ts'

const MARK = { pass: 'PASS', fail: 'FAIL', skip: 'SKIP' } as const

/** One line per result, for a terminal or a CI log. */
export function formatResult(result: CheckResult): string {
  const message = result.message ? ` — ${result.message.split('\n')[0]}` : ''
  return `${MARK[result.outcome]} ${result.id}${message}`
}

/** The closing summary. */
export function formatSummary(report: SuiteReport): string {
  const { pass, fail, skip, total } = report.summary
  return [
    `variant ${report.variant}, profiles ${report.profiles.join(',')}${report.certify ? ', certify' : ''}: ${total} checks, ${pass} passed, ${fail} failed, ${skip} skipped`,
    `${report.requests} requests in ${(report.durationMs / 1000).toFixed(1)} s${report.throttledMs ? ` (${(report.throttledMs / 1000).toFixed(1)} s waiting for the rate limit)` : ''}`,
  ].join('\n')
}
