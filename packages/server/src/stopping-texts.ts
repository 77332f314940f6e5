/**
 * The error texts of the answers a stopping process gives in its handlers' place, worded once for
 * every runtime: the Node listener at the end of its grace (node-shutdown-refusal.ts), the Deno and
 * Bun drain (fetch-drain.ts).
 */
export const STOPPING_TEXTS = {
  /** A whole request this process will not serve: refused during a drain, or its handler still at work when the grace ended. */
  stopping: 'service unavailable: this process is stopping; send the request again',
  /** A request still arriving when the grace ended. */
  stoppedBeforeArrival: 'service unavailable: the service stopped before the request arrived in full; send it again',
} as const
