/**
 * Answers a listener gave in its handler's place (on Node, the 503 at the end of the shutdown grace,
 * node-shutdown-refusal.ts), so the request log states what the client got: the handler ends later
 * with its own response (a 400 for a body cut under it), which never reaches the wire. Kept by the
 * runtime's response object (Node's ServerResponse), which the app sees as `event.runtime.node.res`.
 */
export interface ListenerAnswer {
  status: number
  /** The error text sent. */
  error: string
  /** Why the listener answered, for the log line: `shutdown grace over`. */
  answeredBy: string
}

const answers = new WeakMap<object, ListenerAnswer>()

/** Records that the listener sent `answer` on `response` in the handler's place. */
export function recordListenerAnswer(response: object, answer: ListenerAnswer): void {
  answers.set(response, answer)
}

/** What the listener sent in the handler's place on `response`, if it did. */
export function listenerAnswerOn(response: object | undefined): ListenerAnswer | undefined {
  return response ? answers.get(response) : undefined
}

/**
 * An answer the listener gave where no request reached the app, so no request log line was written:
 * bytes that are no request (400, 408, 414, 431), CONNECT, no Host, an unknown Expect, a head still
 * arriving when the shutdown grace ended. The listener's caller logs it as a request line.
 */
export interface ListenerRefusal extends ListenerAnswer {
  /** When the request's line was read. */
  method?: string
  path?: string
}
