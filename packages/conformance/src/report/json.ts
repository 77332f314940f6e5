import type { SuiteReport } from '../runner.ts'

/** The report as JSON: the run's settings, a summary and every result with its message. */
export function toJsonReport(report: SuiteReport): string {
  return `${JSON.stringify({ format: 'mos-conformance-report/1', ...report }, null, 2)}\n`
}
