import { ERROR_TEXTS, EXTENSION_ERROR_TEXTS } from '@mos/sdk/contract'
import type { Config } from '../config/schema.ts'
import { ApiError } from '../errors.ts'
import { callbackUrlProblem } from './callback-url.ts'

/**
 * The submit's `callback_url` form field (Mos extension), checked: undefined when absent; a 400
 * when webhooks are off (no secret: nothing could sign the delivery), when it is not an http(s)
 * URL, or when it reaches a private address and the operator did not allow that.
 */
export async function callbackUrlOf(fields: Record<string, string>, config: Config['webhooks']): Promise<string | undefined> {
  const value = fields.callback_url
  if (value === undefined || value === '') return undefined
  if (!config.secret) throw new ApiError(400, EXTENSION_ERROR_TEXTS.webhooksNotConfigured())
  const problem = await callbackUrlProblem(value, { allowPrivate: config.allowPrivate })
  if (problem) throw new ApiError(400, ERROR_TEXTS.invalidField('callback_url', problem))
  return value
}
