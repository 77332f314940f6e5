import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { ERROR_TEXTS } from '@mos/sdk/contract'
import type { ListenerRefusal } from './listener-answer.ts'
import { overflowedInRequestLine } from './request-line-overflow.ts'
import { headerLines } from './security-headers.ts'

/**
 * The refusals Node's HTTP server would otherwise make itself, with a bare status line or none: each
 * here answers with the contract's `{"error": …}` instead, so a client's bytes end in the contract's
 * error whatever layer refuses them (node-listener.ts wires them). Each carries `headers`, the
 * listener's answer headers (the security headers of the app's own answers, security-headers.ts).
 */

/** Headers on every answer written here. */
export type AnswerHeaders = Readonly<Record<string, string>>

/** Writes a whole answer on a socket no response object owns (before a request exists, or for CONNECT), and ends it. */
export function endWithAnswer(socket: Socket, status: number, reason: string, error: string, headers: AnswerHeaders): void {
  const body = JSON.stringify({ error })
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${headerLines(headers)}Connection: close\r\n\r\n${body}`,
  )
}

/** The listener's bounds the refusals name. */
export interface RefusalBounds {
  /** SERVICE__SERVER__HEADERS_TIMEOUT_MS: Node's headersTimeout, the only request clock (requestTimeout is off). */
  headersTimeoutMs: number
  /** Node's bound on a request's URL and headers together, in bytes (`maxHeaderSize`, 16 KB unless `--max-http-header-size`). */
  maxHeaderSize: number
}

/**
 * A client sending garbage before a request exists (or too slowly): answer with the contract's
 * error shape and close, where Node's default would send a bare status line.
 */
export function answerClientError(
  error: NodeJS.ErrnoException,
  socket: Socket,
  bounds: RefusalBounds,
  headers: AnswerHeaders,
): ListenerRefusal | undefined {
  // As Node's default handler: never write into a response already on its way.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true
  if (!socket.writable || inFlight || error.code === 'ECONNRESET') {
    socket.destroy()
    return undefined
  }
  // Node's header clock also runs on a new connection before its first byte: one that asked nothing
  // is closed as an idle keep-alive connection is, without an answer to a request never made.
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' && socket.bytesRead === 0) {
    socket.destroy()
    return undefined
  }
  const [status, reason, detail] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'Request Timeout', `the request's line and headers did not arrive within ${seconds(bounds.headersTimeoutMs)}`]
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? overflowedInRequestLine(error)
          ? [414, 'URI Too Long', `the URL is too long (the URL and headers may hold ${bounds.maxHeaderSize} bytes together)`]
          : [431, 'Request Header Fields Too Large', 'headers too large']
        : error.code === 'HPE_INVALID_EOF_STATE'
          ? // The client shut its side mid-request (mid-body): its request can never complete.
            [400, 'Bad Request', 'the request ended before it was complete']
          : [400, 'Bad Request', `invalid HTTP${parserReason(error)}`]
  const text = ERROR_TEXTS.malformedBody(detail)
  endWithAnswer(socket, status, reason, text, headers)
  return { status, error: text, answeredBy: 'http parser' }
}

/** `ms` in words: "1 second", "20 seconds", "1.5 seconds". */
function seconds(ms: number): string {
  const value = ms / 1000
  return `${value} second${value === 1 ? '' : 's'}`
}

/**
 * What Node's parser (llhttp) found wrong, as it words it ("Invalid character in chunk size",
 * "Content-Length can't be present with Transfer-Encoding"): fixed texts about the bytes sent, which
 * tell a client what to fix where "invalid HTTP" alone did not. Empty when there is none.
 */
function parserReason(error: NodeJS.ErrnoException & { reason?: unknown }): string {
  const reason = typeof error.reason === 'string' ? error.reason.trim() : ''
  if (!error.code?.startsWith('HPE_') || reason === '' || reason.length > 100) return ''
  return ` (${reason})`
}

/**
 * CONNECT (a proxy tunnel, which this service is not): 405. With no 'connect' listener Node destroys
 * the socket, and the client got no answer at all.
 */
export function answerConnect(req: IncomingMessage, socket: Socket, headers: AnswerHeaders): ListenerRefusal {
  socket.on('error', () => undefined)
  const text = ERROR_TEXTS.methodNotAllowed('CONNECT', req.url ?? '')
  endWithAnswer(socket, 405, 'Method Not Allowed', text, headers)
  return { status: 405, error: text, answeredBy: 'listener', method: 'CONNECT', path: req.url ?? '' }
}

/** Sends the contract's error on a response of the HTTP server (the listener closes the connection if the body is unread). */
export function answerWithError(res: ServerResponse, status: number, error: string, headers: AnswerHeaders): void {
  const body = JSON.stringify({ error })
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body)
}

/** An `Expect` other than 100-continue: 417, where Node's default sends it with no body. */
export function refuseExpectation(req: IncomingMessage, res: ServerResponse, headers: AnswerHeaders): ListenerRefusal {
  const text = ERROR_TEXTS.malformedBody('the only Expect header taken is 100-continue')
  answerWithError(res, 417, text, headers)
  return { status: 417, error: text, answeredBy: 'listener', ...requestLine(req) }
}

/** The method and path of a request the listener answers, for its log line. */
export function requestLine(req: IncomingMessage): { method?: string; path?: string } {
  return { method: req.method, path: req.url?.split('?')[0] }
}

/**
 * An HTTP/1.1 request without Host (RFC 9112 §3.2 says 400), or undefined when it has one. Node's
 * own check (requireHostHeader) answers with no body, so the listener turns it off and asks here.
 */
export function missingHost(req: IncomingMessage): string | undefined {
  if (req.httpVersionMajor === 1 && req.httpVersionMinor === 1 && req.headers.host === undefined) {
    return ERROR_TEXTS.malformedBody('an HTTP/1.1 request needs a Host header')
  }
  return undefined
}
