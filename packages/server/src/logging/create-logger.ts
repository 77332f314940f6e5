import pino from 'pino'
import { prettyLine } from './pretty-line.ts'

export type Logger = pino.Logger

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
export type LogFormat = 'auto' | 'json' | 'pretty'

/** Where log lines go: anything with a `write(line)` (a stream, or a test's collector). */
export interface LogDestination {
  write(line: string): unknown
}

export interface LoggerOptions {
  /** Least level written (SERVICE__LOG__LEVEL). */
  level?: LogLevel
  /** `auto` is pretty on a terminal and JSON otherwise (SERVICE__LOG__FORMAT). */
  format?: LogFormat
  /** Defaults to standard output. */
  destination?: LogDestination
  /** Fields on every line (e.g. the process's role in a cluster). */
  base?: Record<string, unknown>
}

export const LOGGER_DEFAULTS = {
  level: 'info',
  format: 'auto',
} as const satisfies LoggerOptions

/**
 * The service's one logger: pino writing one JSON object per line, or short readable lines when a
 * person is watching. Made once in main.ts (or startServer) and passed down; every other logger is a
 * `child` of it carrying request and task fields.
 *
 * ```ts
 * const logger = createLogger({ level: 'info', format: 'json' })
 * logger.child({ requestId }).info({ status: 200 }, 'request')
 * ```
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? LOGGER_DEFAULTS.level
  const format = options.format ?? LOGGER_DEFAULTS.format
  const pretty = format === 'pretty' || (format === 'auto' && !options.destination && process.stdout.isTTY === true)
  // Synchronous writes: a line written just before process.exit (a start-up failure) is not lost.
  const target: LogDestination = options.destination ?? pino.destination({ dest: 1, sync: true })
  // A built-in formatter rather than pino-pretty: production dependencies stay lean and no
  // transport thread is started for it.
  const colour = !options.destination && process.stdout.isTTY === true
  const stream = pretty ? { write: (line: string) => target.write(prettyLine(line, colour)) } : target
  return pino(
    {
      level,
      base: { pid: process.pid, ...options.base },
      timestamp: pino.stdTimeFunctions.isoTime,
      // Level names, not numbers: a reader (and grep) should not need pino's table.
      formatters: { level: (label) => ({ level: label }) },
    },
    stream,
  )
}
