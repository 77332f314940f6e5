import { REFUSAL_LINGER } from '../refusal-linger.ts'

/**
 * After a refusal, what a Worker reads and drops: the Node listener's figures, so a client still
 * sending a refused upload finishes its write and reads the answer. A client that stopped sending
 * once it had the answer (nothing arrives for `idleMs`) is done with.
 */
const UNREAD_BODY_LINGER = { ...REFUSAL_LINGER, idleMs: 2_000 } as const

/** Answers up to this size are sent whole at once when the request's body is left unread (refusals are a line of JSON). */
const SMALL_ANSWER_BYTES = 64 * 1024

/** workerd's stream of a declared length: its response goes out with a Content-Length. */
declare const FixedLengthStream: new (length: number) => TransformStream<Uint8Array, Uint8Array>

/** The part of a Worker's `ExecutionContext` used here. */
interface Execution {
  waitUntil(promise: Promise<unknown>): void
}

/** A request whose body the app reads through a stream of ours, and how its answer goes out. */
export interface LingeringRequest {
  request: Request
  /** The response to send: as it is when the app read the whole body, else lingering (below). */
  answer(response: Response, execution: Execution): Promise<Response>
}

/**
 * Hands the app the request with a body it may stop reading without the runtime noticing, and
 * sends a refusal so that a client still uploading reads it.
 *
 * When the app refuses an upload early (the key, the declared size, the first part's size), it
 * leaves the rest of the body unread. workerd reads no request body once the response is complete
 * ("Can't read from request stream after response has been sent") and resets the connection, and a
 * client still writing (undici's `fetch`, the SDK) then reports ECONNRESET or EPIPE instead of the
 * answer (measured on workerd 2026-07-30 with 10 MB uploads answered 401 and 413). So the answer
 * goes out at once with its length, all but its last byte, and the response stays open while the
 * rest of the body is read and dropped (up to the linger figures), as the Node listener's lingering
 * close does; then the last byte ends it.
 */
export function lingeringRequest(request: Request): LingeringRequest {
  if (!request.body) return { request, answer: async (response) => response }
  const body = bodyOnDemand(request.body.getReader())
  return {
    request: new Request(request, { body: body.stream, duplex: 'half' } as RequestInit),
    answer: (response, execution) => answerWhileDropping(response, execution, body),
  }
}

/** The request's body as the app reads it, and what is left of it once the app stopped. */
interface BodyOnDemand {
  readonly stream: ReadableStream<Uint8Array>
  /** Whether the body was read to its end. */
  finished(): boolean
  /** Reads and drops what the app left, within the linger figures, then cancels the rest. */
  dropUnread(): Promise<void>
}

function bodyOnDemand(reader: ReadableStreamDefaultReader<Uint8Array>): BodyOnDemand {
  let finished = false
  // workerd's request stream takes one read at a time: the app's read still in flight when it
  // stopped reading is awaited before the rest is dropped.
  let reading: Promise<unknown> = Promise.resolve()
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const read = reader.read()
        reading = read.catch(() => undefined)
        const { done, value } = await read
        if (done) {
          finished = true
          controller.close()
        } else controller.enqueue(value)
      },
    },
    // Reads only when the app asks: nothing is taken from the client ahead of the app.
    { highWaterMark: 0 },
  )
  return {
    stream,
    finished: () => finished,
    async dropUnread() {
      const deadline = Date.now() + UNREAD_BODY_LINGER.ms
      let dropped = 0
      try {
        await reading
        while (!finished && dropped <= UNREAD_BODY_LINGER.bytes && Date.now() < deadline) {
          const next = await readOrIdle(reader, UNREAD_BODY_LINGER.idleMs)
          if (next === 'idle') break
          if (next.done) finished = true
          else dropped += next.value.byteLength
        }
      } catch {
        // The client went away: nothing left to read.
      }
      if (!finished) await reader.cancel().catch(() => undefined)
    },
  }
}

/** The response to send for a request whose body the app may have left unread (see lingeringRequest). */
async function answerWhileDropping(response: Response, execution: Execution, body: BodyOnDemand): Promise<Response> {
  if (body.finished()) return response
  const declared = Number(response.headers.get('content-length') ?? Number.NaN)
  if (!response.body || !(response.status >= 400 || declared <= SMALL_ANSWER_BYTES)) {
    // A large answer (a download a client sent a body with) streams while the body is dropped.
    execution.waitUntil(body.dropUnread())
    return response
  }
  const bytes = new Uint8Array(await response.arrayBuffer())
  const { readable, writable } = new FixedLengthStream(bytes.byteLength)
  const writer = writable.getWriter()
  // All but the last byte now: workerd ends a fixed-length response once its last byte is written,
  // and reads no body after that. The client has the status, headers and all but one byte of the
  // error at once; the last byte follows the dropped body (or the client's going quiet).
  const held = Math.max(0, bytes.byteLength - 1)
  void writer.write(bytes.subarray(0, held)).catch(() => undefined)
  execution.waitUntil(
    body
      .dropUnread()
      .then(() => writer.write(bytes.subarray(held)))
      .then(() => writer.close())
      .catch(() => undefined),
  )
  return new Response(readable, response)
}

/** The next chunk of the body, or `idle` when none arrives within `idleMs`. */
async function readOrIdle(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  idleMs: number,
): Promise<ReadableStreamReadResult<Uint8Array> | 'idle'> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const idle = new Promise<'idle'>((resolve) => {
    timer = setTimeout(() => resolve('idle'), idleMs)
  })
  try {
    return await Promise.race([reader.read(), idle])
  } finally {
    clearTimeout(timer)
  }
}
