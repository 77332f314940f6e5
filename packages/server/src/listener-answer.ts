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

const committing = new WeakSet<object>()

/**
 * The handler is about to act for good (a submit: spend a trial file, record its task, queue it):
 * from now on the listener does not answer in its place, and waits for its answer instead
 * (node-shutdown-refusal.ts). Returns false, and marks nothing, when the listener has answered
 * already: its 503 said the request was not served, so the handler must not act and undoes what it
 * stored. Listener and handler run on one thread, so no answer can slip between the check and the mark.
 * `response` is undefined where no listener answers in a handler's place (Deno, Bun, in-process): true.
 */
export function beginCommit(response: object | undefined): boolean {
  if (!response) return true
  if (answers.has(response)) return false
  committing.add(response)
  return true
}

/** Whether the handler on `response` has begun to act for good (`beginCommit`). */
export function isCommitting(response: object): boolean {
  return committing.has(response)
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
