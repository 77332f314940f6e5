import { EXTENSION_ERROR_TEXTS, EXTENSION_HEADERS, ERROR_TEXTS, MAX_IDEMPOTENCY_KEY_LENGTH } from '@mos/sdk/contract'
import type { H3Event } from 'h3'
import { sha256 as sha256Stream } from '@noble/hashes/sha2.js'
import { ApiError } from '../errors.ts'
import type { FileStore } from '../storage/file-store.ts'
import type { Upload } from '../uploads/read-upload.ts'
import { sha256Hex, toHex } from '../web-crypto.ts'
import type { IdempotencyStore } from './idempotency-store.ts'

/** How long a key answers with its first response (Stripe keeps keys 24 h too). */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000

/**
 * How long a claim of a key still being handled lasts unless renewed; its handler renews it every
 * third of that while it works. A process that dies holding a claim (killed, out of memory, or cut
 * at the end of its shutdown grace after answering 503 "send the request again") thus frees the key
 * within this bound: claimed for the key's 24 h, every retry with it was a 409 for a day. 15 s: the
 * SDK's first retry after that 503 (Retry-After STOPPING_RETRY_AFTER_SECONDS, 5 s, then up to 10 s of waiting for the key, below)
 * finds the key free and runs.
 */
export const IN_FLIGHT_CLAIM_MS = 15_000

/**
 * How long a retry waits for the first request with its key to be answered before it gets a 409:
 * the first request is past its upload then, so what is left is a few record writes.
 */
const IN_FLIGHT_WAIT = { totalMs: 10_000, stepMs: 100 } as const

/**
 * The wait the 409 for a key still in flight asks for (Retry-After, seconds): the first request is
 * past its upload by then, and a client that heeds it (the SDK does) finds its answer on the retry.
 */
export const IN_FLIGHT_RETRY_AFTER_SECONDS = 1

/**
 * Printable ASCII (%x20-7E), as the IETF draft's sf-string and docs/api.md have it: spaces included
 * (`k o` was refused, the pattern stopping at %x21). Not at either end: HTTP strips a field value's
 * outer whitespace on its way (RFC 9110 §5.5), so such a key could never arrive as sent.
 */
const KEY_PATTERN = new RegExp(`^[\\x21-\\x7e](?:[\\x20-\\x7e]{0,${MAX_IDEMPOTENCY_KEY_LENGTH - 2}}[\\x21-\\x7e])?$`)

/** The request's Idempotency-Key (printable ASCII, spaces inside, 1–255 characters), undefined when absent; checked before the body is read. */
export function idempotencyKeyOf(event: H3Event): string | undefined {
  const key = event.req.headers.get(EXTENSION_HEADERS.idempotencyKey)
  if (key === null) return undefined
  if (!KEY_PATTERN.test(key)) {
    throw new ApiError(
      400,
      ERROR_TEXTS.invalidField(EXTENSION_HEADERS.idempotencyKey, `1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters`),
    )
  }
  return key
}

/** What `idempotent` needs of a submit request. */
export interface IdempotentRequest {
  event: H3Event
  store: IdempotencyStore
  files: FileStore
  /** From `idempotencyKeyOf`, read before the body; undefined: no key, the submit just runs. */
  key: string | undefined
  /** The caller's `keyOwner`: keys are scoped by it, so two API keys never see each other's answers. */
  owner: string
  /** The endpoint (part of the fingerprint: one key on two endpoints is two requests). */
  path: string
  upload: Upload
  /** Removes this request's upload when the answer is a replay. */
  discard(): Promise<void>
}

/**
 * Runs a submit once per Idempotency-Key (Mos extension). Called after the upload is stored and
 * validated and before anything is counted or queued (`run` does that): the first request with a
 * key runs and its answer is kept for 24 h; a later one with the same endpoint, fields and file
 * contents gets that answer (no second task, no second trial file) with `Idempotent-Replayed: true`;
 * a later one with anything different is a 422. A run that fails gives its key up, so a retry
 * runs again. Keys are the API key's own (scoped by its digest).
 */
export async function idempotent<T>(request: IdempotentRequest, run: () => Promise<T>): Promise<T> {
  if (request.key === undefined) return run()
  const { store } = request
  const id = `${request.owner}:${await sha256Hex(request.key)}`
  const fingerprint = await requestFingerprint(request.files, request.path, request.upload)
  for (let waited = 0; ; waited += IN_FLIGHT_WAIT.stepMs) {
    const held = await store.claim(id, fingerprint, IN_FLIGHT_CLAIM_MS)
    if (!held) break
    if (held.fingerprint && held.fingerprint !== fingerprint) throw new ApiError(422, EXTENSION_ERROR_TEXTS.idempotencyKeyReused())
    if (held.response !== undefined) {
      await request.discard()
      request.event.res.headers.set(EXTENSION_HEADERS.idempotentReplayed, 'true')
      return held.response as T
    }
    if (waited >= IN_FLIGHT_WAIT.totalMs) {
      throw new ApiError(409, EXTENSION_ERROR_TEXTS.idempotencyKeyInFlight(), { 'retry-after': String(IN_FLIGHT_RETRY_AFTER_SECONDS) })
    }
    await new Promise((resolve) => setTimeout(resolve, IN_FLIGHT_WAIT.stepMs))
  }
  let response: T
  // A renewal that fails (Redis away) is let be: the claim then lapses as a dead process's would.
  const renewal = setInterval(() => void store.renew(id, IN_FLIGHT_CLAIM_MS).catch(() => undefined), IN_FLIGHT_CLAIM_MS / 3)
  try {
    response = await run()
  } catch (error) {
    await store.release(id).catch(() => undefined)
    throw error
  } finally {
    clearInterval(renewal)
  }
  // The task exists now: a failure to record the answer must not fail (and clean up) the request;
  // a retry after the claim lapses then makes a second task, as a task is run at least once
  // (docs/api.md, Retries after a crash), where a claim held for 24 h answered every retry 409.
  await store.complete(id, { fingerprint, response, expiresAt: Date.now() + IDEMPOTENCY_TTL_MS }).catch(() => undefined)
  return response
}

/** The request as far as its result depends on it: endpoint, fields (sorted) and each file's name, size and content digest. */
async function requestFingerprint(files: FileStore, path: string, upload: Upload): Promise<string> {
  const digests = await Promise.all(
    upload.files.map(async (file) => ({ name: file.filename, size: file.size, sha256: await fileDigest(files, file.key) })),
  )
  const fields = Object.entries(upload.fields).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  // The upload lists files as their writes finish, which is not always the order they were sent in:
  // the same files in another order are the same request.
  const order = (file: (typeof digests)[number]) => `${file.name}\u0000${file.sha256}\u0000${file.size}`
  const sorted = digests.sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0))
  return sha256Hex(JSON.stringify({ path, fields, files: sorted }))
}

/**
 * The stored upload's digest, read back only for requests that carry a key. Incremental (noble's
 * SHA-256): Web Crypto digests only whole buffers, and an upload may be hundreds of MB.
 */
async function fileDigest(files: FileStore, key: string): Promise<string> {
  const hash = sha256Stream.create()
  const reader = (await files.read(key)).getReader()
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) hash.update(chunk.value)
  return toHex(hash.digest())
}
