export interface ProgressWriterOptions {
  /** Least time between two writes (ms), counted from the writer's creation. */
  intervalMs?: number
  /**
   * Writes one progress value (0–99); answers whether it did. A write it skips (the value is no
   * longer news) does not start a new interval.
   */
  write: (progress: number) => boolean
}

export const PROGRESS_WRITER_DEFAULTS = { intervalMs: 250 }

export interface ProgressWriter {
  /** A progress report from the job (any number: rounded and kept within 0–99). */
  report(progress: number): void
  /** Drops a write still waiting for its interval (the run ended). */
  stop(): void
}

/**
 * Throttles a job's progress reports to at most one write per interval. The last value of a burst
 * is written when the interval ends rather than dropped (a slow final stage would otherwise show
 * stale progress). The interval counts from the start: a task shorter than it writes no progress
 * at all, only its start and end.
 */
export function createProgressWriter(options: ProgressWriterOptions): ProgressWriter {
  const interval = options.intervalMs ?? PROGRESS_WRITER_DEFAULTS.intervalMs
  let lastWrite = Date.now()
  let latest = 0
  let trailing: ReturnType<typeof setTimeout> | undefined
  const flush = () => {
    trailing = undefined
    if (options.write(latest)) lastWrite = Date.now()
  }
  return {
    report(progress) {
      // 100 is the completed record's alone: a job's own 100 must not show before the result is stored.
      latest = Math.max(latest, Math.min(99, Math.round(progress)))
      if (trailing) return
      const wait = interval - (Date.now() - lastWrite)
      if (wait <= 0) flush()
      else trailing = setTimeout(flush, wait)
    },
    stop() {
      clearTimeout(trailing)
      trailing = undefined
    },
  }
}
