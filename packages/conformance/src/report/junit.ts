import type { SuiteReport } from '../runner.ts'

const escape = (text: string) =>
  text
    // XML 1.0 cannot carry most control characters, even escaped.
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')

const seconds = (ms: number) => (ms / 1000).toFixed(3)

/**
 * The report as JUnit XML: one <testsuite> per check group, one <testcase> per check (name = check
 * id), <failure> and <skipped> carrying the message. CI systems read this format natively.
 */
export function toJunitXml(report: SuiteReport): string {
  const groups = new Map<string, SuiteReport['results']>()
  for (const result of report.results) groups.set(result.group, [...(groups.get(result.group) ?? []), result])
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="mos-conformance variant ${report.variant}" tests="${report.summary.total}" failures="${report.summary.fail}" skipped="${report.summary.skip}" errors="0" time="${seconds(report.durationMs)}">`,
  ]
  for (const [group, results] of groups) {
    const failures = results.filter((r) => r.outcome === 'fail').length
    const skipped = results.filter((r) => r.outcome === 'skip').length
    const time = results.reduce((sum, r) => sum + r.durationMs, 0)
    lines.push(
      `  <testsuite name="${escape(group)}" tests="${results.length}" failures="${failures}" skipped="${skipped}" errors="0" time="${seconds(time)}" timestamp="${report.startedAt.replace(/Z$/, '')}">`,
    )
    for (const r of results) {
      const open = `    <testcase name="${escape(r.id)}" classname="${escape(`${r.profile}.${r.group}`)}" time="${seconds(r.durationMs)}"`
      if (r.outcome === 'pass') {
        lines.push(`${open}/>`)
      } else if (r.outcome === 'skip') {
        lines.push(`${open}>`, `      <skipped message="${escape(r.message ?? '')}"/>`, '    </testcase>')
      } else {
        lines.push(
          `${open}>`,
          `      <failure message="${escape((r.message ?? '').split('\n')[0]!.slice(0, 500))}" type="${escape(r.profile)}">${escape(`${r.title}\n${r.message ?? ''}`)}</failure>`,
          '    </testcase>',
        )
      }
    }
    lines.push('  </testsuite>')
  }
  lines.push('</testsuites>', '')
  return lines.join('\n')
}
