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

/** A server-sent-events answer over `body`: never cached, and never buffered by a proxy on the way. */
export function eventStreamResponse(body: ReadableStream<Uint8Array>): Response {
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
