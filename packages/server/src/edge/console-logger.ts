import type { Logger, LoggerOptions, LogLevel } from '../logging/create-logger.ts'

const LEVELS: Exclude<LogLevel, 'silent'>[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal']

/**
 * The service's logger on a Worker: the same JSON lines as pino's (`level` as a name, `time`,
 * the base and child fields, `msg`), written with `console.log`, which is what a Worker's logs
 * (`wrangler tail`, Workers Logs, workerd's standard output) collect. pino itself writes to file
 * descriptors and loads worker threads for its transports, neither of which a Worker has. It
 * covers what the service calls: the six levels, `(fields, message)` or `(message)`, and `child`.
 */
export function createConsoleLogger(options: Pick<LoggerOptions, 'level' | 'base'> = {}): Logger {
  return consoleLogger(options.level ?? 'info', { ...options.base })
}

function consoleLogger(level: LogLevel, fields: Record<string, unknown>): Logger {
  const least = level === 'silent' ? LEVELS.length : LEVELS.indexOf(level)
  const write = (name: (typeof LEVELS)[number]) => (first?: unknown, message?: string) => {
    if (LEVELS.indexOf(name) < least) return
    const own = typeof first === 'object' && first !== null ? (first as Record<string, unknown>) : {}
    const msg = typeof first === 'string' ? first : message
    console.log(JSON.stringify({ level: name, time: new Date().toISOString(), ...fields, ...own, ...(msg === undefined ? {} : { msg }) }))
  }
  const logger = {
    level,
    child: (bindings: Record<string, unknown>, childOptions?: { level?: LogLevel }) =>
      consoleLogger(childOptions?.level ?? level, { ...fields, ...bindings }),
    ...Object.fromEntries(LEVELS.map((name) => [name, write(name)])),
  }
  return logger as unknown as Logger
}
