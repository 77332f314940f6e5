import { EXTENSION_ERROR_TEXTS, STOPPING_RETRY_AFTER_SECONDS } from '@mos/sdk/contract'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { isCommitting, type ListenerRefusal, recordListenerAnswer } from './listener-answer.ts'
import { type AnswerHeaders, answerWithError, endWithAnswer } from './node-protocol-refusals.ts'

/**
 * The answer to a request still in flight when the shutdown grace is over, where it got a bare
 * hang-up: `503 {"error": …}` with `Connection: close` and `Retry-After` (another instance, or this
 * one restarted, takes it), then the connection closes once it had a moment to read it.
 */

/**
 * How long the answered connections are read and dropped before they are cut: closing a socket with
 * the client's bytes unread resets it, and a client reset before it read our answer never sees it.
 */
export const SHUTDOWN_REFUSAL_LINGER_MS = 1_000

type Connection = Socket & { _httpMessage?: ServerResponse | null }

/** What the end of the grace did to the connections: answered 503, or left to a handler acting for good. */
export interface GraceEnd {
  /** The connections answered 503 here. */
  answered: Connection[]
  /** The responses of whole requests whose handler has begun to act for good (`beginCommit`): their own answer is waited for. */
  committing: ServerResponse[]
}

/**
 * Answers every connection whose request has no answer under way: a request whose body is still
 * arriving (its handler's body fails, so it removes what it stored), a whole request whose handler
 * is still at work before it acts for good (a store that stopped answering while the upload was
 * stored or its key claimed: the handler, if it ever resumes, finds this answer and does nothing,
 * removing its upload), and a request whose head is still arriving. The 503 thus always means
 * "nothing was done: send it again".
 *
 * A handler that has begun to act for good (a submit recording its task: `beginCommit`) is not
 * answered in its place: a 503 there could be false (its task may yet be recorded and run, and a
 * client that sends the request again without an Idempotency-Key would get two), so its own answer
 * is waited for (node-listener.ts). A response already under way (its status is out) and a
 * connection that sent nothing are left to be cut as before.
 */
export function refuseUnanswered(
  connections: Iterable<Connection>,
  headers: AnswerHeaders,
  onRefusal?: (refusal: ListenerRefusal) => void,
): GraceEnd {
  const refusalHeaders = { ...headers, 'Retry-After': String(STOPPING_RETRY_AFTER_SECONDS) }
  const end: GraceEnd = { answered: [], committing: [] }
  for (const socket of connections) {
    if (socket.destroyed || !socket.writable) continue
    const res = socket._httpMessage
    const req = (res as (ServerResponse & { req?: IncomingMessage }) | null | undefined)?.req
    if (res && req) {
      if (res.headersSent) continue
      if (isCommitting(res)) {
        end.committing.push(res)
        continue
      }
      dropWhatFollows(socket)
      const arrived = req.complete
      answerInPlaceOfHandler(
        res,
        arrived ? EXTENSION_ERROR_TEXTS.processStopping() : EXTENSION_ERROR_TEXTS.stoppedBeforeArrival(),
        refusalHeaders,
      )
      if (!arrived) failBody(req)
    } else if (socket.bytesRead > 0) {
      // A request's head is still arriving (an idle keep-alive connection was closed by the drain).
      dropWhatFollows(socket)
      endWithAnswer(socket, 503, 'Service Unavailable', EXTENSION_ERROR_TEXTS.stoppedBeforeArrival(), refusalHeaders)
      onRefusal?.({ status: 503, error: EXTENSION_ERROR_TEXTS.stoppedBeforeArrival(), answeredBy: 'shutdown grace over' })
    } else continue
    end.answered.push(socket)
  }
  return end
}

/**
 * Sends the 503 on the handler's response. The handler answers later, if ever (a 400 for a body cut
 * under it): the listener's answer is recorded, so the request's log line says what the client got.
 */
function answerInPlaceOfHandler(res: ServerResponse, error: string, headers: AnswerHeaders): void {
  recordListenerAnswer(res, { status: 503, error, answeredBy: 'shutdown grace over' })
  res.shouldKeepAlive = false
  answerWithError(res, 503, error, headers)
}

/**
 * The parser gets no more of the client's bytes (a head completed now would start a request after
 * the grace; a body completed now would reach its handler after its 503): they are read and dropped.
 * Node takes the socket off its parser once a 'data' listener is added (its listener wrapper).
 */
function dropWhatFollows(socket: Socket): void {
  socket.removeAllListeners('data')
  socket.on('data', () => undefined)
  socket.resume()
}

/**
 * The handler's body ends with an error, as when its connection is cut, without the socket going
 * with it (IncomingMessage's own destroy resets the socket, before the client read its 503).
 */
function failBody(req: IncomingMessage): void {
  ;(req as IncomingMessage & { _destroy: IncomingMessage['_destroy'] })._destroy = (error, callback) => callback(error)
  req.destroy(new Error('the shutdown grace ended before the request arrived in full'))
}
