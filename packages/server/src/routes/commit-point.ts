import { EXTENSION_ERROR_TEXTS } from '@mos/sdk/contract'
import type { H3Event } from 'h3'
import { ApiError } from '../errors.ts'
import { beginCommit } from '../listener-answer.ts'

/**
 * Called by a handler just before it acts for good (a submit spending a trial file and recording its
 * task, a cancel or delete writing, a licence activated): throws the stopping 503 when the listener
 * already answered the request in its place (Node, the end of the shutdown grace, while the handler
 * was held on a store), since that 503 told the client nothing was done; the handler's refusal path
 * then removes what it had stored (an upload). Otherwise the listener waits for this handler's own
 * answer from now on (node-shutdown-refusal.ts). The throw never reaches the client, which has its 503.
 */
export function enterCommit(event: H3Event): void {
  if (!beginCommit(event.runtime?.node?.res)) throw new ApiError(503, EXTENSION_ERROR_TEXTS.processStopping())
}
