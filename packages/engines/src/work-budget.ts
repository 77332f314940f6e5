/**
 * How long one job may keep its engine thread, from the size of its input: a base for the fixed
 * costs (reading, codecs, validation, writing) plus an allowance per MB. Inputs cost roughly in
 * proportion to their size; one that asks for far more (a 600-byte file declaring 10^9 of
 * something, a 1 MB PNG of 8192² pixels times many textures) is stopped at its budget instead of
 * holding a thread until the task time-out.
 */
export interface WorkBudget {
  /** Seconds every job gets, however small its input. */
  baseSeconds: number
  /** Seconds added per MB (2^20 bytes) of input. */
  secondsPerMb: number
}

/**
 * One minute plus ten seconds per MB: a 1 MB input may use 70 s, a 100 MB one about 17 minutes
 * (the task time-out ends it first). The slowest real work measured per input MB is KTX2 of
 * well-compressed 4K textures (about 27 s per texture, docs/textures.md), which a few MB of PNG
 * can hold; those need a larger `secondsPerMb`.
 */
export const WORK_BUDGET_DEFAULTS: WorkBudget = {
  baseSeconds: 60,
  secondsPerMb: 10,
}

/**
 * The budget in milliseconds for an input of `inputBytes`.
 *
 * ```ts
 * workBudgetMs(512 * 1024, { baseSeconds: 60, secondsPerMb: 10 }) // → 65_000
 * ```
 */
export function workBudgetMs(inputBytes: number, budget: WorkBudget = WORK_BUDGET_DEFAULTS): number {
  const mb = Math.max(0, inputBytes) / (1024 * 1024)
  return Math.round((budget.baseSeconds + budget.secondsPerMb * mb) * 1000)
}

/** The failure of a job stopped at its budget: what the input asked for, not how it was stopped. */
export function workBudgetMessage(budgetMs: number): string {
  return `the input needed more work than its budget allows (stopped after ${formatSeconds(budgetMs)} s, the budget for its size)`
}

function formatSeconds(ms: number): string {
  return ms >= 10_000 ? String(Math.round(ms / 1000)) : String(Number((ms / 1000).toFixed(1)))
}
