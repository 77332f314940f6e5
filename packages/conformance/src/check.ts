import type { TaskType, Variant } from '@mos/sdk/contract'
import type { RunContext } from './context.ts'

/**
 * Profiles group checks by where their rule comes from:
 * - `core`: the HTTP interface specification itself; required for certification.
 * - `mos`: decisions the Mos service documents where the specification is silent (docs/api.md):
 *   exact texts of errors the contract gives no pattern for, 409 on an early download, keyed
 *   capabilities, ...
 */
export const PROFILES = ['core', 'mos'] as const
export type Profile = (typeof PROFILES)[number]

/** The profile whose skips `--certify` turns into failures. */
export const REQUIRED_PROFILE: Profile = 'core'

/** What a check needs from the deployment before it can run; missing needs make it SKIP. */
export interface CheckNeeds {
  /** An operation the deployment must advertise (A: capabilities.features; B: its endpoint answers). */
  feature?: TaskType
  /** An endpoint outside the task operations that must be served (batch, license, metrics). */
  endpoint?: 'batch' | 'license' | 'metrics'
  /** A setting given on the command line. */
  setting?: keyof Settings
}

/** Deployment settings some checks need to provoke a limit; given by flags. */
export interface Settings {
  /** Requests per minute per key (variant A rate limit). */
  rateLimit?: number
  /** Largest accepted upload in MB. */
  maxFileSizeMb?: number
  /** Most files per batch. */
  maxBatchCount?: number
}

export interface Check {
  /** Stable id, `group.name[.detail]`, used by --include/--exclude and in reports. */
  id: string
  group: string
  title: string
  profile: Profile
  variants: readonly Variant[]
  needs?: CheckNeeds
  /** Checks that exhaust a budget of the deployment (the rate limit) run after all others. */
  last?: boolean
  // biome-ignore lint/suspicious/noConfusingVoidType: a check returns nothing, or a note of what it saw.
  run(ctx: RunContext): Promise<void | string>
}

export type Outcome = 'pass' | 'fail' | 'skip'

export interface CheckResult {
  id: string
  group: string
  title: string
  profile: Profile
  outcome: Outcome
  /** Why it failed or was skipped; for a pass, an optional note of what was seen. */
  message?: string
  durationMs: number
}

/** Thrown by a check whose rule does not hold. */
export class CheckFailure extends Error {
  override name = 'CheckFailure'
}

/** Thrown by a check that cannot run here (not advertised, setting not given). */
export class CheckSkip extends Error {
  override name = 'CheckSkip'
}

/** Fails the running check with a message. */
export function fail(message: string): never {
  throw new CheckFailure(message)
}

/** Skips the running check with a reason. */
export function skip(reason: string): never {
  throw new CheckSkip(reason)
}
