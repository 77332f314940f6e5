import { ERROR_TEXTS, LICENSE_REQUIRED_STATUS } from '@mos/sdk/contract'
import { ApiError } from '../errors.ts'
import type { Licensing } from '../licensing/licensing.ts'

function trialRefusal(licensing: Licensing): ApiError {
  const state = licensing.state()
  const max = licensing.trialMaxFiles
  if (state.status === 'expired' && state.payload) {
    const at = new Date(state.payload.expires_at * 1000).toISOString()
    return new ApiError(LICENSE_REQUIRED_STATUS, ERROR_TEXTS.licenseExpiredTrialExhausted(at, max))
  }
  return new ApiError(LICENSE_REQUIRED_STATUS, ERROR_TEXTS.trialExhausted(max))
}

/**
 * Takes `count` files from the trial when no active licence covers them, or throws the 402. Called
 * once the request is otherwise valid, just before its tasks are recorded, so a refused request
 * costs no trial file.
 */
export async function admitFiles(licensing: Licensing, count: number): Promise<void> {
  if (licensing.state().status === 'active') return
  if (!(await licensing.trial.reserve(count, licensing.trialMaxFiles))) throw trialRefusal(licensing)
}
