import { Logger } from '@gltf-transform/core'

/** Most warnings kept per job: a pathological file must not grow the result without bound. */
const MAX_WARNINGS = 50

/**
 * A glTF-Transform logger for one job: warnings (work a transform skipped, such as texture
 * coordinates outside [0, 1] left unquantized) are kept for the task record instead of going to
 * the service's output without saying which task they belong to.
 */
export class JobLogger extends Logger {
  readonly warnings: string[] = []

  constructor() {
    super(Logger.Verbosity.WARN)
  }

  override warn(text: string): void {
    if (this.warnings.length < MAX_WARNINGS && !this.warnings.includes(text)) this.warnings.push(text)
  }

  override error(text: string): void {
    this.warn(text)
  }
}
