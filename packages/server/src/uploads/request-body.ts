import { ERROR_TEXTS } from '@mos/sdk/contract'
import type { H3Event } from 'h3'
import { ApiError } from '../errors.ts'

/** The request body chunk by chunk: a read that fails (the client went away) is an `error`, not a throw. */
export interface BodyChunks {
  next(): Promise<
    | { done: true }
    | { done: false; value: Uint8Array }
    | { error: unknown; done?: undefined }
    /** No byte arrived within the idle bound: the request is refused with this 408. */
    | { stalled: ApiError; done?: undefined }
  >
}

/** The 408 of a body that sent nothing for `idleMs`. */
export function bodyStalled(idleMs: number): ApiError {
  const seconds = idleMs / 1000
  return new ApiError(
    408,
    ERROR_TEXTS.malformedBody(`no byte of the request body arrived for ${seconds} second${seconds === 1 ? '' : 's'}`),
  )
}

/**
 * The request's web body (`event.req.body`, on every runtime), read through one reader; undefined
 * when the request has none. Nothing here cancels the body: a refused request's unread rest is the
 * listener's to read off or drop (on Node, cancelling the body would reset the connection under a
 * client still sending, before it read our answer).
 *
 * A read waiting more than `idleMs` for its chunk ends as `stalled` (SERVICE__SERVER__BODY_IDLE_TIMEOUT_MS):
 * a stalled client must not hold its connection and upload for long, while a slow one that keeps
 * sending is never cut. Only the wait for the client counts, not the time the caller spends between
 * reads (a store's write pace), so the bound lives here, on every runtime, and not on the socket.
 */
export function readRequestBody(event: H3Event, idleMs: number): BodyChunks | undefined {
  const body = event.req.body
  if (!body) return undefined
  const reader = body.getReader()
  return {
    async next() {
      let timer: ReturnType<typeof setTimeout> | undefined
      const stalled = new Promise<'stalled'>((resolve) => (timer = setTimeout(() => resolve('stalled'), idleMs)))
      try {
        const read = await Promise.race([reader.read(), stalled])
        if (read === 'stalled') return { stalled: bodyStalled(idleMs) }
        return read.done ? { done: true } : { done: false, value: read.value }
      } catch (error) {
        return { error }
      } finally {
        clearTimeout(timer)
      }
    },
  }
}
