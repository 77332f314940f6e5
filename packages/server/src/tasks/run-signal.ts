export interface RunSignalOptions {
  /** A run longer than this is aborted as timed out (ms); none when unset or 0. */
  timeoutMs?: number
  /** Aborted when this process hands the task back (stopping without drain). */
  handBack?: AbortSignal
  /** Aborted when a client cancels the task (from any process). */
  cancel?: AbortSignal
}

export interface RunSignal {
  /** What the job gets: aborted on time-out or hand-back, whichever comes first. */
  signal: AbortSignal
  /** Whether the time-out fired. */
  timedOut(): boolean
  /** Whether the task was handed back: its result must not be recorded. */
  handedBack(): boolean
  /** Whether a client cancelled the task. */
  cancelled(): boolean
  /** Ends the time-out (the job is over). */
  clear(): void
}

/** One signal for a run's job from its time-out, its hand-back and its cancel, telling afterwards which fired. */
export function createRunSignal(options: RunSignalOptions = {}): RunSignal {
  const timeout = new AbortController()
  const timer = options.timeoutMs ? setTimeout(() => timeout.abort(), options.timeoutMs) : undefined
  const others = [options.handBack, options.cancel].filter((signal): signal is AbortSignal => signal !== undefined)
  return {
    signal: others.length > 0 ? AbortSignal.any([...others, timeout.signal]) : timeout.signal,
    timedOut: () => timeout.signal.aborted,
    handedBack: () => options.handBack?.aborted === true,
    cancelled: () => options.cancel?.aborted === true,
    clear: () => clearTimeout(timer),
  }
}
