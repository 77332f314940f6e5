const LEVEL_COLOURS: Record<string, string> = {
  fatal: '\x1b[41m',
  error: '\x1b[31m',
  warn: '\x1b[33m',
  info: '\x1b[32m',
  debug: '\x1b[36m',
  trace: '\x1b[90m',
}
/** Fields every line has, or that the line's head already shows. */
const HIDDEN = new Set(['time', 'level', 'msg', 'pid', 'hostname'])

/**
 * One JSON log line as a person reads it: `12:03:04.567 INFO  request GET /api/v1/health 200 ...`,
 * then the remaining fields as `key=value`. A line that is not JSON passes through unchanged.
 */
export function prettyLine(line: string, colour: boolean): string {
  let entry: Record<string, unknown>
  try {
    entry = JSON.parse(line) as Record<string, unknown>
  } catch {
    return line
  }
  const time = typeof entry.time === 'string' ? entry.time.slice(11, 23) : ''
  const level = String(entry.level ?? '')
  const label = level.toUpperCase().padEnd(5)
  const head = colour ? `${LEVEL_COLOURS[level] ?? ''}${label}\x1b[0m` : label
  const fields = Object.entries(entry)
    .filter(([key]) => !HIDDEN.has(key))
    .map(([key, value]) => `${key}=${typeof value === 'string' && !/\s/.test(value) ? value : JSON.stringify(value)}`)
  return `${time} ${head} ${String(entry.msg ?? '')}${fields.length > 0 ? `  ${fields.join(' ')}` : ''}\n`
}
