import { randomBytes } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { readDotEnv } from './config/dot-env.ts'
import { hashPassword } from './console/password-hash.ts'
import { ConfigError, loadConfig } from './config/load.ts'
import type { Config } from './config/schema.ts'
import { createLogger, type Logger } from './logging/create-logger.ts'
import { type RunningServer, startServer } from './server.ts'
import { errorText } from './error-text.ts'
import { checkFsBaseWritable } from './storage/fs-base-check.ts'

/**
 * A development secret (`name`: the API key, the console password), made by `make` the first time
 * and kept beside the data, so it survives restarts and is printed the same each time.
 */
async function developmentSecret(config: Config, name: string, make: () => string): Promise<string> {
  const file = join(resolve(config.storage.fs.base), name)
  try {
    return (await readFile(file, 'utf8')).trim()
  } catch {
    const secret = make()
    await mkdir(resolve(config.storage.fs.base), { recursive: true })
    await writeFile(file, `${secret}\n`, { mode: 0o600 })
    return secret
  }
}

/** The development credentials `main` made and put into `config`, to print once listening. */
interface DevelopmentCredentials {
  key?: string
  consolePassword?: string
}

/**
 * With no key configured, a development key is created once and printed: `npm install && npm start`
 * gives a working service with nothing to set. With neither a console password nor an API key (the
 * `npm start` case), a development console password likewise.
 */
async function addDevelopmentCredentials(config: Config): Promise<DevelopmentCredentials> {
  const made: DevelopmentCredentials = {}
  if (config.console.enabled && !config.console.adminPasswordHash && config.auth.apiKeys.length === 0 && config.server.role !== 'worker') {
    made.consolePassword = await developmentSecret(config, 'dev-console-password', () => randomBytes(15).toString('base64url'))
    config.console.adminPasswordHash = await hashPassword(made.consolePassword)
  }
  if (config.auth.apiKeys.length === 0) {
    made.key = await developmentSecret(config, 'dev-api-key', () => `dev-${randomBytes(18).toString('base64url')}`)
    config.auth.apiKeys = [made.key]
  }
  return made
}

/**
 * The last resort: every request, stream and task path handles its own errors, so reaching this
 * is a bug. It is logged with what is known; an uncaught exception still ends the process (its
 * state is unknown after one, and the supervisor restarts it; tasks resume from their records),
 * while an unhandled rejection, one promise nobody awaited, is logged and the service keeps serving.
 */
function installLastResort(logger: () => Logger): void {
  process.on('uncaughtException', (error, origin) => {
    logger().fatal({ origin, error: error.message, stack: error.stack }, 'uncaught exception: stopping')
    process.exit(70)
  })
  process.on('unhandledRejection', (reason) => {
    const error = reason instanceof Error ? { error: reason.message, stack: reason.stack } : { error: String(reason) }
    logger().error(error, 'unhandled rejection (kept serving)')
  })
}

async function main(): Promise<void> {
  // Until the configured logger exists, the last resort writes with the defaults.
  let logger: Logger = createLogger()
  installLastResort(() => logger)
  const config = loadConfigOrExit(logger)
  logger = createLogger({ ...config.log, base: { role: config.server.role } })
  await exitUnless(checkFsBaseWritable(config), logger)
  const credentials = await addDevelopmentCredentials(config)
  const server = await startOrExit(config, logger)
  announceStart(logger, config, server.port, credentials)
  stopOnSignals(server, logger)
}

function loadConfigOrExit(logger: Logger): Config {
  try {
    readDotEnv(process.cwd(), process.env)
    return loadConfig(process.env)
  } catch (error) {
    if (error instanceof ConfigError) {
      // The log settings themselves may be what is wrong: this one line uses the defaults.
      logger.fatal(`configuration error: ${error.message}`)
      process.exit(1)
    }
    throw error
  }
}

/** Waits for a start-up check; one that fails stops the process with its message. */
async function exitUnless(check: Promise<void>, logger: Logger): Promise<void> {
  try {
    await check
  } catch (error) {
    logger.fatal(`cannot start: ${errorText(error)}`)
    process.exit(1)
  }
}

async function startOrExit(config: Config, logger: Logger): Promise<RunningServer> {
  try {
    return await startServer({ config, logger })
  } catch (error) {
    // Some settings (the licence's public key and key file, the deployment's combination) are checked when the service is built.
    const message = errorText(error)
    logger.fatal(error instanceof ConfigError ? `configuration error: ${message}` : `cannot start: ${message}`)
    process.exit(1)
  }
}

function announceStart(logger: Logger, config: Config, port: number, credentials: DevelopmentCredentials): void {
  // Tests and scripts read the port from this message: keep `listening on http://HOST:PORT` in it.
  // These two lines are written whatever the level: the address and the development key must show.
  const startup = logger.child({}, { level: 'info' })
  startup.info(
    { port, variant: config.server.variant, storage: config.storage.driver, queue: config.queue.driver },
    `${config.server.role === 'worker' ? 'worker (health only)' : `variant ${config.server.variant}`} listening on http://${config.server.host}:${port}` +
      ` (role: ${config.server.role}, storage: ${config.storage.driver}, queue: ${config.queue.driver})`,
  )
  // The key is followed by a space, so `: (\S+)` finds it in a JSON line as on a terminal.
  if (credentials.key) startup.info(`development API key: ${credentials.key} (set SERVICE__AUTH__API_KEYS to use your own)`)
  if (credentials.consolePassword) {
    // A wildcard address is no page to open, and a browser sends the session cookie over plain http to loopback names only.
    const host = ['0.0.0.0', '::', '[::]'].includes(config.server.host) ? 'localhost' : config.server.host
    startup.info(
      `development console password: ${credentials.consolePassword} (sign in at http://${host}:${port}/console/; set SERVICE__CONSOLE__ADMIN_PASSWORD_HASH to use your own)`,
    )
  }
}

/** Exit codes of a process ended by a signal (128 + its number), as a shell reports them. */
const SIGNAL_EXIT_CODES: Record<string, number> = { SIGINT: 130, SIGTERM: 143 }

/**
 * SIGTERM and SIGINT drain: requests in flight finish within SERVICE__SERVER__SHUTDOWN_GRACE_MS, then
 * the running tasks finish, then the process exits 0. A second one during the drain stops at once
 * (a Ctrl-C pressed again, an operator who will not wait): what was in flight is cut, as by a kill,
 * and running tasks are taken up again (the next start, or another worker once their lock expires).
 */
function stopOnSignals(server: RunningServer, logger: Logger): void {
  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) {
      logger.warn(
        { signal },
        `${signal} again: stopping now; requests in flight are cut, running tasks start again later (the next start, or another worker)`,
      )
      process.exit(SIGNAL_EXIT_CODES[signal] ?? 1)
    }
    stopping = true
    logger.info(
      { signal },
      `${signal}: finishing requests in flight (${server.context.config.server.shutdownGraceMs} ms at most) and running tasks, then stopping (${signal} again: stop now)`,
    )
    await server.close({ drain: true })
    logger.info('stopped')
    process.exit(0)
  }
  process.on('SIGTERM', () => void stop('SIGTERM'))
  process.on('SIGINT', () => void stop('SIGINT'))
}

await main()
