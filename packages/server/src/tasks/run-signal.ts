export interface RunSignalOptions {
  /** A run longer than this is aborted as timed out (ms); none when unset or 0. */
  timeoutMs?: number
  /** Aborted when this process hands the task back (stopping without drain). */
  handBack?: AbortSignal
}

export interface RunSignal {
  /** What the job gets: aborted on time-out or hand-back, whichever comes first. */
  signal: AbortSignal
  /** Whether the time-out fired. */
  timedOut(): boolean
  /** Whether the task was handed back: its result must not be recorded. */
  handedBack(): boolean
  /** Ends the time-out (the job is over). */
  clear(): void
}

/** One signal for a run's job from its time-out and its hand-back, telling afterwards which fired. */
export function createRunSignal(options: RunSignalOptions = {}): RunSignal {
  const timeout = new AbortController()
  const timer = options.timeoutMs ? setTimeout(() => timeout.abort(), options.timeoutMs) : undefined
  return {
    signal: options.handBack ? AbortSignal.any([options.handBack, timeout.signal]) : timeout.signal,
    timedOut: () => timeout.signal.aborted,
    handedBack: () => options.handBack?.aborted === true,
    clear: () => clearTimeout(timer),
  }
}
