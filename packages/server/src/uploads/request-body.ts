import type { H3Event } from 'h3'

/** The request body chunk by chunk: a read that fails (the client went away) is an `error`, not a throw. */
export interface BodyChunks {
  next(): Promise<{ done: true } | { done: false; value: Uint8Array } | { error: unknown; done?: undefined }>
}

/**
 * The request's web body (`event.req.body`, on every runtime), read through one reader; undefined
 * when the request has none. Nothing here cancels the body: a refused request's unread rest is the
 * listener's to read off or drop (on Node, cancelling the body would reset the connection under a
 * client still sending, before it read our answer).
 */
export function readRequestBody(event: H3Event): BodyChunks | undefined {
  const body = event.req.body
  if (!body) return undefined
  const reader = body.getReader()
  return {
    async next() {
      try {
        const { done, value } = await reader.read()
        return done ? { done: true } : { done: false, value }
      } catch (error) {
        return { error }
      }
    },
  }
}
