import { Logger } from '@gltf-transform/core'
import type { EngineLogEntry } from './jobs.ts'

/** Most warnings kept per job: a pathological file must not grow the result without bound. */
const MAX_WARNINGS = 50

/**
 * A glTF-Transform logger for one job: warnings (work a transform skipped, such as texture
 * coordinates outside [0, 1] left unquantized) are kept for the task record instead of going to
 * the service's output without saying which task they belong to.
 */
export class JobLogger extends Logger {
  readonly warnings: string[] = []
  readonly #onWarning: ((entry: EngineLogEntry) => void) | undefined

  /** `onWarning` hears each warning kept, as it happens (the worker posts it to the main thread's log). */
  constructor(onWarning?: (entry: EngineLogEntry) => void) {
    super(Logger.Verbosity.WARN)
    this.#onWarning = onWarning
  }

  override warn(text: string): void {
    if (this.warnings.length >= MAX_WARNINGS || this.warnings.includes(text)) return
    this.warnings.push(text)
    this.#onWarning?.({ level: 'warn', message: text })
  }

  override error(text: string): void {
    this.warn(text)
  }
}
