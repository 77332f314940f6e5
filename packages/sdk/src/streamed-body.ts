import { type MosError, TimeoutError, UserAbortError } from './errors.ts'

/** What a streamed answer's body needs from the attempt that fetched it. */
export interface StreamedBodyOptions {
  /** The caller's signal: it still cancels the body, which then fails with `UserAbortError`. */
  signal: AbortSignal | undefined
  /** Longest wait for the next chunk while one is asked for, in ms (0: none); a stall fails with `TimeoutError`. */
  idleTimeout: number
  /** Stops the fetch under the body (closes its connection). */
  abortFetch: () => void
  /** Turns a failed read of the body (a dropped connection) into the client's error. */
  readError: (error: unknown) => MosError
}

/**
 * The body of a streamed answer (`downloadStream`, `downloadToFile`), read at the caller's pace.
 * It keeps a listener on the caller's signal only until the body ends, fails or is cancelled: an
 * application-wide signal given to every download would otherwise gather one listener (holding
 * its response) per download. It also makes the caller's abort and a stalled server end the body
 * itself, as `UserAbortError` and `TimeoutError`, where a fetch's own abort surfaces as a bare
 * `AbortError` (undici) or, under some fetch implementations (msw's), never reaches a body
 * already handed over. The idle limit runs only while a chunk is asked for, so a slow reader is
 * never timed out, but a server that stops sending mid-body no longer hangs a download for ever.
 */
export function streamedBody(source: ReadableStream<Uint8Array>, options: StreamedBodyOptions): ReadableStream<Uint8Array> {
  const reader = source.getReader()
  const { signal } = options
  let output: ReadableStreamDefaultController<Uint8Array>
  let finished = false
  let idleTimer: ReturnType<typeof setTimeout> | undefined

  /** Ends the body once: lets go of the signal and the timer; with an error, fails it and stops the fetch. */
  const finish = (error?: MosError) => {
    if (finished) return
    finished = true
    clearTimeout(idleTimer)
    signal?.removeEventListener('abort', onAbort)
    if (!error) return
    output.error(error)
    options.abortFetch()
    reader.cancel(error).catch(() => undefined)
  }
  const onAbort = () => finish(new UserAbortError(undefined, { cause: signal?.reason }))

  return new ReadableStream<Uint8Array>({
    start(controller) {
      output = controller
      if (signal?.aborted) onAbort()
      else signal?.addEventListener('abort', onAbort, { once: true })
    },
    async pull(controller) {
      if (options.idleTimeout > 0) {
        idleTimer = setTimeout(
          () => finish(new TimeoutError(`the answer stalled: no data for ${options.idleTimeout} ms`)),
          options.idleTimeout,
        )
      }
      try {
        const { done, value } = await reader.read()
        clearTimeout(idleTimer)
        if (finished) return
        if (done) {
          finish()
          controller.close()
        } else controller.enqueue(value)
      } catch (error) {
        finish(options.readError(error))
      }
    },
    cancel(reason) {
      finish()
      // Not awaited: a source's cancel may wait on a read that never ends (msw's does); the
      // connection closes with the fetch.
      reader.cancel(reason).catch(() => undefined)
      options.abortFetch()
    },
  })
}
