import { Logger } from '@gltf-transform/core'
import type { Platform } from '../platform.ts'

type Level = 'debug' | 'info' | 'warn' | 'error'

/** A logger that keeps what it hears, to be told to another logger later, or never (see {@link withHeldLogs}). */
class HeldLogger extends Logger {
  readonly #held: [Level, string][] = []

  constructor() {
    super(Logger.Verbosity.DEBUG)
  }

  override debug(text: string): void {
    this.#held.push(['debug', text])
  }

  override info(text: string): void {
    this.#held.push(['info', text])
  }

  override warn(text: string): void {
    this.#held.push(['warn', text])
  }

  override error(text: string): void {
    this.#held.push(['error', text])
  }

  /** Tells `logger` what was held, in order, at its own verbosity. */
  tell(logger: Logger): void {
    for (const [level, text] of this.#held) logger[level](text)
  }
}

/**
 * Runs `work` with the platform's logs (its logger and its IO's, which the worker makes one) held,
 * and returns its result with `tell()`, which passes them on; a `work` that fails passes them on
 * before its error, as they would have been. For a read that may be done again (readModel), so that
 * its warnings are told once.
 */
export async function withHeldLogs<T>(platform: Platform, work: () => Promise<T>): Promise<{ result: T; tell: () => void }> {
  const logger = platform.logger
  const held = new HeldLogger()
  platform.logger = held
  platform.io.setLogger(held)
  try {
    return { result: await work(), tell: () => held.tell(logger) }
  } catch (error) {
    held.tell(logger)
    throw error
  } finally {
    platform.logger = logger
    platform.io.setLogger(logger)
  }
}
