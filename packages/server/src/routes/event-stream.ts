/** A stream's server-sent events, as text. */
export interface EventWriter {
  /** Sends the text, unless the stream has ended; ends it instead once the reader is `maxBacklog` events behind. */
  send(text: string): void
  /** Ends the stream once (and stops what feeds it). */
  end(): void
  readonly ended: boolean
}

/**
 * The writer of a server-sent-events body. `onEnd` runs once, when the stream ends (to stop what
 * feeds it); a reader more than `maxBacklog` events behind has its stream ended (it reconnects).
 */
export function createEventWriter(
  controller: ReadableStreamDefaultController<Uint8Array>,
  onEnd: () => void,
  maxBacklog = Number.POSITIVE_INFINITY,
): EventWriter {
  const encoder = new TextEncoder()
  let ended = false
  const end = () => {
    if (ended) return
    ended = true
    onEnd()
    controller.close()
  }
  return {
    send(text) {
      if (ended) return
      if ((controller.desiredSize ?? 0) < -maxBacklog) return end()
      controller.enqueue(encoder.encode(text))
    },
    end,
    get ended() {
      return ended
    },
  }
}

/** What keeps a stream of task changes open, and lets it go: see `holdEventStream`. */
export interface StreamHold {
  /**
   * Keeps the listener until the stream stops; when there is none (listening failed: Redis away) or
   * the stream ended meanwhile, ends the stream (the client reconnects or reads the record) and
   * answers false.
   */
  attach(unlisten: (() => void) | undefined): boolean
  /** Stops the keep-alive, the wait for the service's close, and the listener. */
  stop(): void
}

/**
 * Holds a stream of task changes open: a comment line every `keepAlive.everyMs` keeps it alive
 * through proxies that cut idle connections and lets a client notice a dead one, and the service's
 * stop ends it (`onClose`).
 */
export function holdEventStream(
  writer: EventWriter,
  events: { onClose(listener: () => void): () => void },
  keepAlive: { everyMs: number; line: string },
): StreamHold {
  const timer = setInterval(() => writer.send(keepAlive.line), keepAlive.everyMs)
  const stopOnClose = events.onClose(writer.end)
  let unlisten: (() => void) | undefined
  return {
    attach(listening) {
      if (!listening || writer.ended) {
        listening?.()
        writer.end()
        return false
      }
      unlisten = listening
      return true
    },
    stop() {
      clearInterval(timer)
      stopOnClose()
      unlisten?.()
    },
  }
}

/** A server-sent-events answer over `body` (null for a HEAD): never cached, and never buffered by a proxy on the way. */
export function eventStreamResponse(body: ReadableStream<Uint8Array> | null): Response {
  return new Response(body, {
    status: 200,
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      // Proxies that buffer responses (nginx) would hold the events back until the stream ends.
      'x-accel-buffering': 'no',
    },
  })
}
