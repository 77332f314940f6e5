/**
 * Mos extensions of the HTTP interface (beyond the contract; documented in docs/api.md): names,
 * bounds and wire texts shared by the server, the SDK and the conformance suite.
 */

/** Longest `?wait=` of `GET /tasks/{id}` (the long poll), in seconds. */
export const MAX_TASK_WAIT_SECONDS = 60

/** Headers of the extensions. */
export const EXTENSION_HEADERS = {
  /** On `GET /tasks/{id}`: the server takes `?wait=` up to this many seconds (absent: no long poll). */
  waitMax: 'Mos-Wait-Max',
  /** On submits: the client's key that makes a retried submit return the first response. */
  idempotencyKey: 'Idempotency-Key',
  /** On a submit answered from an earlier request with the same Idempotency-Key. */
  idempotentReplayed: 'Idempotent-Replayed',
  /** On webhook deliveries: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
  signature: 'Mos-Signature',
  /** On webhook deliveries: the same for every attempt of one event, for de-duplication. */
  eventId: 'Mos-Event-Id',
} as const

/** Longest Idempotency-Key accepted (characters; printable ASCII). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255

/**
 * The wait, in seconds, in the `Retry-After` of a stopping process's 503 (`processStopping`,
 * `stoppedBeforeArrival`), on every runtime: the client is asked the same whichever refused it.
 * Behind a balancer any wait finds another instance. A process that runs alone is back only once it
 * has finished its running tasks, exited and been started again (a Node process listens 0.4–0.5 s
 * after it is spawned, measured on 2 cores): at 1 s, the wait Deno's drain asked, the SDK's two
 * retries of a keyed submit were spent within about 3 s on a process still draining or not yet
 * listening. 5 s also fits the claim an Idempotency-Key keeps after its process died mid-submit
 * (15 s: this wait and the 10 s a retry waits for the key, server's IN_FLIGHT_CLAIM_MS).
 */
export const STOPPING_RETRY_AFTER_SECONDS = 5

/** Wire texts of the extensions' errors (the body is `{"error": text}` as every error). */
export const EXTENSION_ERROR_TEXTS = {
  /** 422: the key was used before with another request. */
  idempotencyKeyReused: () => 'Idempotency-Key was already used with a different request: use a new key for a new request',
  /** 409: the first request with this key is still being handled. */
  idempotencyKeyInFlight: () => 'a request with this Idempotency-Key is still being handled: retry in a moment',
  /**
   * 503 with Retry-After: a whole request a stopping process will not serve (refused during a drain, or its handler
   * still at work when the shutdown grace ended). Any other process, or this one restarted, takes it.
   */
  processStopping: () => 'service unavailable: this process is stopping; send the request again',
  /** 503 with Retry-After: a request still arriving when the shutdown grace ended. */
  stoppedBeforeArrival: () => 'service unavailable: the service stopped before the request arrived in full; send it again',
  /** 400: callback_url given on a deployment without a webhook secret. */
  webhooksNotConfigured: () => 'invalid value for callback_url: webhooks are not configured on this deployment',
} as const
