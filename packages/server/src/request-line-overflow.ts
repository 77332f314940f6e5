import type { IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'

/**
 * Tells a URL too long (414) from headers too large (431). Node's parser counts the URL and the
 * headers against one bound (`maxHeaderSize`, 16 KB) and reports HPE_HEADER_OVERFLOW for both, with
 * the chunk it was reading as the only context; a request line sent in several TCP reads (any long
 * URL over a real network) overflows in a chunk that holds neither its start nor its end. So the
 * listener watches each connection's head bytes as the parser takes them and keeps the start of the
 * line in progress: at an overflow, a line that starts with a method and a space is the request line.
 */

/** What the watch decided for an overflow error: true when it struck in the request line. */
const decided = new WeakMap<Error, boolean>()

/** Enough of a line to tell `PROPPATCH /…` from `X-Header: …`. */
const LINE_START = 16

/** Node's HTTP parser as the server's connection listener leaves it on `socket.parser`. */
interface NodeParser {
  incoming: IncomingMessage | null
  getCurrentBuffer(): Buffer
  constructor: { kOnExecute?: unknown }
  [slot: number]: unknown
}

/**
 * Watches one connection's request heads (wired to the server's 'connection' event, after Node's
 * own listener set the parser up). Only chunks that hold head bytes are copied: a chunk wholly inside
 * a body (an upload) is passed by. Without the parser internals this relies on (another Node), it
 * does nothing and overflowedInRequestLine judges from the failing chunk alone.
 */
export function watchRequestLines(socket: Socket): void {
  const parser = (socket as Socket & { parser?: NodeParser }).parser
  const slot = parser?.constructor.kOnExecute
  if (!parser || typeof slot !== 'number' || typeof parser[slot] !== 'function' || typeof parser.getCurrentBuffer !== 'function') return
  const onExecute = parser[slot] as (result: unknown) => unknown
  let line = ''
  let inBodyOf: IncomingMessage | undefined
  // Called by the parser after each chunk it read off the socket (with the chunk readable), before
  // Node acts on the result: an overflow is decided here, before the 'clientError' it leads to.
  parser[slot] = (result: unknown) => {
    // Only a watch: whatever it meets (another Node's parser), the parser's own step runs, and an
    // overflow it did not decide is judged from the failing chunk.
    try {
      const after = parser.incoming && !parser.incoming.complete ? parser.incoming : undefined
      const error = result instanceof Error ? (result as Error & { code?: string; bytesParsed?: number }) : undefined
      if (error || !inBodyOf || after !== inBodyOf) {
        const chunk = parser.getCurrentBuffer()
        const read = chunk.subarray(0, error?.bytesParsed ?? chunk.length)
        line = lineInProgress(line, read)
        if (error?.code === 'HPE_HEADER_OVERFLOW') decided.set(error, isRequestLine(line))
      }
      inBodyOf = after
      // A body's bytes are not lines; the next request starts where it ends.
      if (after) line = ''
    } catch {
      line = ''
    }
    return onExecute(result)
  }
}

/** Whether an HPE_HEADER_OVERFLOW struck in the request line (the URL): 414 rather than 431. */
export function overflowedInRequestLine(error: Error & { rawPacket?: unknown; bytesParsed?: number }): boolean {
  const known = decided.get(error)
  if (known !== undefined) return known
  if (!Buffer.isBuffer(error.rawPacket)) return false
  return isRequestLine(lineInProgress('', error.rawPacket.subarray(0, error.bytesParsed ?? error.rawPacket.length)))
}

/** The start of the line in progress once `bytes` follow a line that started with `line`. */
function lineInProgress(line: string, bytes: Buffer): string {
  const newline = bytes.lastIndexOf(0x0a)
  if (newline >= 0) return bytes.toString('latin1', newline + 1, Math.min(bytes.length, newline + 1 + LINE_START))
  return line.length >= LINE_START ? line : line + bytes.toString('latin1', 0, Math.min(bytes.length, LINE_START - line.length))
}

/** A request line starts with a method and a space; a header line with a name and a colon (a space there is refused by the parser). */
function isRequestLine(line: string): boolean {
  return /^[A-Z]+ /.test(line)
}
