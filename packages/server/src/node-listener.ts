import { ERROR_TEXTS } from '@mos/sdk/contract'
import { createServer, type IncomingMessage, maxHeaderSize, type Server, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { ListenerRefusal } from './listener-answer.ts'
import {
  type AnswerHeaders,
  answerClientError,
  answerConnect,
  answerWithError,
  missingHost,
  refuseExpectation,
  requestLine,
} from './node-protocol-refusals.ts'
import { refuseUnanswered, SHUTDOWN_REFUSAL_LINGER_MS } from './node-shutdown-refusal.ts'
import { REFUSAL_LINGER } from './refusal-linger.ts'
import { watchRequestLines } from './request-line-overflow.ts'
import { settlesWithin as within } from './with-timeout.ts'

export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => unknown

export interface NodeListenerOptions {
  port: number
  host: string
  /**
   * How long an idle keep-alive connection is kept. Above the idle time-out of the common load
   * balancers (AWS ALB 60 s, nginx upstream keepalive 60 s), so the balancer, not us, closes an idle
   * connection: a close from our side races a request the balancer is sending on it (a 502 there).
   */
  keepAliveTimeoutMs: number
  /** How long a request's line and headers may take from their first byte (SERVICE__SERVER__HEADERS_TIMEOUT_MS). */
  headersTimeoutMs: number
  /** How long `close()` lets requests in flight finish before it cuts them (SERVICE__SERVER__SHUTDOWN_GRACE_MS). */
  shutdownGraceMs: number
  /** Told of a handler that threw past h3's own error handling (a bug): logged by the caller. */
  onHandlerError?: (error: unknown) => void
  /**
   * Headers on every answer the listener gives itself, before or instead of the handler (400, 408,
   * 414, 431, 417, the grace's 503, a failed handler's 500): the app's security headers (security-headers.ts).
   */
  answerHeaders: AnswerHeaders
  /** Told of each answer the listener gave where no request reached the handler (which logs its own): logged by the caller. */
  onRefusal?: (refusal: ListenerRefusal) => void
}

/** How long closing waits for the handlers of the requests it cut to remove what they stored. */
const CUT_HANDLERS_END_MS = 2_000
/**
 * How long the end of the grace waits for the answer of a handler that has begun to act for good (a
 * submit recording its task, `beginCommit`), where it answers no 503 in its place: that is a trial
 * file, a record and a queue entry, milliseconds on a store that answers. Past it the store has
 * stopped answering mid-write; the connection is cut unanswered, as the process cannot tell either
 * whether the task was recorded (docs/api.md: a submit sent again should carry its Idempotency-Key).
 */
const COMMITTING_ANSWER_MS = 5_000
/**
 * How often a drain closes the connections that turned idle: one whose answer was already under
 * way when it began went out without `Connection: close`, so Node keeps that connection open for
 * its next request, and `server.close()` would wait for its keep-alive time-out (65 s).
 */
const DRAIN_IDLE_SWEEP_MS = 100

/**
 * What closing did: how many requests were still in flight when the grace was over, and were cut, and
 * how many connections with no answer under way got the 503 first (Node; the fetch runtimes' servers
 * give no such hold on a connection, so none there).
 */
export interface ListenerClosed {
  cut: number
  refused: number
  /** Node: requests whose handler was acting for good when the grace ended and gave its own answer after it. */
  waited?: number
}

export interface NodeListener {
  server: Server
  port: number
  close(): Promise<ListenerClosed>
}

/**
 * Serves a Node handler with `node:http`. listhen is not used here: given a taken port it silently
 * moves to another one, which a deployment behind a fixed port mapping must never do; here the
 * keep-alive times, `Expect: 100-continue` and the close after a refusal are ours to decide.
 *
 * - `Expect: 100-continue`: the 100 goes out only once the handler reads the body, so a request
 *   refused from its headers (401, 413, 429, …) never makes the client send its body.
 * - Half-closed clients: a request followed by the client's FIN is answered with `Connection: close`,
 *   then the connection closed.
 * - No clock on a whole request: a body is bounded by its idle time where it is read.
 * - Lingering close (as nginx does): a response sent before the body was read closes the connection,
 *   but only after the rest of the body was read and dropped, up to a bound. Cutting at once resets
 *   the socket under a client that is still sending, and it sees EPIPE instead of our answer.
 */
export async function listenNode(handler: NodeHandler, options: NodeListenerOptions): Promise<NodeListener> {
  // No clock on a whole request (Node's requestTimeout, 300 s by default): it cut a 500 MB upload on a
  // slow link, and let a stalled one hold its connection for 5 minutes. A body is bounded by its idle
  // time instead, where it is read (uploads/request-body.ts, SERVICE__SERVER__BODY_IDLE_TIMEOUT_MS).
  // requireHostHeader: Node's answer to a missing Host has no body; serveRequest gives the contract's.
  // Headers have their own bound (a slow-header client must not hold a connection): Node counts it
  // from a message's first byte and never on an idle keep-alive connection (only a message begun is
  // checked), so it may be far below the keep-alive time. Node checks it every
  // connectionsCheckingInterval (30 s by default, which let slow headers live 66–96 s): here a tenth
  // of the bound, at most 1 s, so the cut comes within the bound and a little.
  const server = createServer({
    keepAliveTimeout: options.keepAliveTimeoutMs,
    requestTimeout: 0,
    headersTimeout: options.headersTimeoutMs,
    connectionsCheckingInterval: Math.min(1_000, Math.max(100, options.headersTimeoutMs / 10)),
    requireHostHeader: false,
  })
  // A client that sends its request and then shuts its side (`socket.end()`, as HTTP/1.0-style tools
  // and some proxies do) still reads the answer: Node's default (httpAllowHalfOpen false, set in its
  // Server constructor with no option to change it) aborts every request in flight on that FIN
  // (_http_server.js socketOnEnd), so such a client got no answer at all. Allowed, Node marks the
  // response in flight as the connection's last and ends the socket once it is sent.
  ;(server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true

  // Handlers still running: closing waits for those it cut to end their own way (below).
  const running = new Set<Promise<unknown>>()
  const drain = { started: false }
  const serve = (req: IncomingMessage, res: ServerResponse, expectsContinue: boolean) => {
    sayCloseOnLastAnswer(res, drain)
    const done = serveRequest(handler, options, req, res, expectsContinue)
    running.add(done)
    void done.finally(() => running.delete(done))
  }
  server.on('request', (req, res) => serve(req, res, false))
  server.on('checkContinue', (req, res) => serve(req, res, true))
  server.on('checkExpectation', (req, res) => {
    closeAfterEarlyAnswer(req, res)
    req.on('error', () => undefined)
    options.onRefusal?.(refuseExpectation(req, res, options.answerHeaders))
  })
  server.on('connection', watchRequestLines)
  const connections = openConnections(server)
  server.on('connect', (req: IncomingMessage, socket: Socket) => options.onRefusal?.(answerConnect(req, socket, options.answerHeaders)))
  const bounds = { headersTimeoutMs: options.headersTimeoutMs, maxHeaderSize }
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    const refusal = answerClientError(error, socket, bounds, options.answerHeaders)
    if (refusal) options.onRefusal?.(refusal)
  })

  await listenOn(server, options.port, options.host)
  const address = server.address()
  return {
    server,
    port: typeof address === 'object' && address ? address.port : options.port,
    close: () => {
      drain.started = true
      return closeServer(server, { running, connections }, options)
    },
  }
}

/**
 * Hands one request to the handler, with 100-continue and the lingering close set up around it;
 * settles once the handler has (never rejects).
 */
async function serveRequest(
  handler: NodeHandler,
  options: NodeListenerOptions,
  req: IncomingMessage,
  res: ServerResponse,
  expectsContinue: boolean,
): Promise<void> {
  const fail = (error: unknown) => {
    options.onHandlerError?.(error)
    failResponse(res, options.answerHeaders)
  }
  if (expectsContinue) sendContinueOnRead(req, res)
  closeAfterEarlyAnswer(req, res)
  // Errors on the request and socket stream (a reset mid-body) are the handler's to see through
  // its reads; without a listener here an 'error' nobody reads would take the process down.
  req.on('error', () => undefined)
  res.on('error', () => undefined)
  const noHost = missingHost(req)
  if (noHost) {
    answerWithError(res, 400, noHost, options.answerHeaders)
    return options.onRefusal?.({ status: 400, error: noHost, answeredBy: 'listener', ...requestLine(req) })
  }
  try {
    await handler(req, res)
  } catch (error) {
    fail(error)
  }
}

/** The server's open connections, for the end of the shutdown grace (closeServer). */
function openConnections(server: Server): Set<Socket> {
  const connections = new Set<Socket>()
  server.on('connection', (socket: Socket) => {
    connections.add(socket)
    socket.once('close', () => connections.delete(socket))
  })
  return connections
}

/** Listens, or rejects with a readable message when the port is taken (never moves to another). */
function listenOn(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off('listening', onListening)
      reject(error.code === 'EADDRINUSE' ? new Error(`port ${port} on ${host} is already in use`) : error)
    }
    const onListening = () => {
      server.off('error', onError)
      resolve()
    }
    server.once('error', onError)
    server.once('listening', onListening)
    server.listen(port, host)
  })
}

/**
 * Drains, as a balancer or an orchestrator expects of a process told to stop: no new connection is
 * accepted, idle keep-alive connections close at once, and requests in flight get `graceMs` to
 * finish and get their answer (with `Connection: close`, see sayCloseOnLastAnswer). After it, a
 * request with no answer under way (still arriving, or its handler still at work before it acts for
 * good) gets a 503 and a moment to read it, a handler acting for good (a submit recording its task)
 * gets up to COMMITTING_ANSWER_MS to give its own answer, and the connections are cut; the drain of
 * tasks happens after, in the context. Resolves once the
 * handlers of the cut requests have ended too (at most CUT_HANDLERS_END_MS): an upload cut there
 * removes what it had stored and writes its log line, which it did not when the process went on to
 * close its stores and exit under it (an empty task folder left, no line for the request).
 */
async function closeServer(
  server: Server,
  { running, connections }: { running: Set<Promise<unknown>>; connections: Set<Socket> },
  { shutdownGraceMs: graceMs, answerHeaders, onRefusal }: NodeListenerOptions,
): Promise<ListenerClosed> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()))
  server.closeIdleConnections()
  const sweep = setInterval(() => server.closeIdleConnections(), DRAIN_IDLE_SWEEP_MS)
  const drained = await within(closed, graceMs)
  clearInterval(sweep)
  if (drained) return { cut: 0, refused: 0 }
  const cut = running.size
  // A request with no answer under way gets a 503 it can read, where it got a bare hang-up (node-shutdown-refusal.ts).
  server.closeIdleConnections()
  const { answered, committing } = refuseUnanswered(connections, answerHeaders, onRefusal)
  const gone = answered.map(
    (socket) => new Promise<void>((resolve) => (socket.destroyed ? resolve() : socket.once('close', () => resolve()))),
  )
  const lingered = gone.length > 0 ? within(Promise.all(gone), SHUTDOWN_REFUSAL_LINGER_MS) : undefined
  // A handler acting for good gives its own answer (its task, or why not), which says what was done.
  const committed = committing.map((res) => new Promise<void>((resolve) => res.once('close', () => resolve())))
  await Promise.all([lingered, committed.length > 0 ? within(Promise.all(committed), COMMITTING_ANSWER_MS) : undefined])
  const waited = committing.filter((res) => res.writableFinished).length
  server.closeAllConnections()
  await closed
  await within(Promise.allSettled(running), CUT_HANDLERS_END_MS)
  return { cut: cut - waited, refused: answered.length, waited }
}

/**
 * An answer that is its connection's last says `Connection: close`, and Node ends the connection
 * once it is sent, so the client does not send its next request on a connection about to go away:
 * - every answer written once the drain began;
 * - the answer to the last request before a client's half-close (its FIN). Node marks that answer
 *   `_last` (socketOnEnd, with httpAllowHalfOpen) and ends the connection after it, but writes its
 *   header from `shouldKeepAlive` alone, so the answer said `Connection: keep-alive` and then the
 *   connection closed under a client that took it at its word. An answer under way before the FIN
 *   arrived has its header out already; Node still closes after it, as HTTP allows.
 */
function sayCloseOnLastAnswer(res: ServerResponse, drain: { started: boolean }): void {
  const writeHead = res.writeHead as (...args: unknown[]) => ServerResponse
  res.writeHead = ((...args: unknown[]) => {
    if (drain.started || (res as ServerResponse & { _last?: boolean })._last) res.shouldKeepAlive = false
    return writeHead.apply(res, args)
  }) as ServerResponse['writeHead']
}

function failResponse(res: ServerResponse, headers: AnswerHeaders): void {
  if (res.headersSent) {
    res.destroy()
    return
  }
  answerWithError(res, 500, ERROR_TEXTS.internal('request handler failed'), headers)
}

/**
 * Sends `100 Continue` the first time anything reads the body (pipe, read, a web stream), and
 * never once an answer is on its way: Node would otherwise write it as a stray line after the
 * response when it dumps the unread body.
 */
function sendContinueOnRead(req: IncomingMessage, res: ServerResponse): void {
  const read = req._read.bind(req)
  let sent = false
  req._read = (size: number) => {
    if (!sent && !res.headersSent && !res.writableEnded) {
      sent = true
      res.writeContinue()
    }
    read(size)
  }
}

/**
 * A response whose request body is not fully read ends the connection (else Node would read the
 * whole body to reuse it, 2 GiB if that is what the client sends), and the socket lingers: the
 * response is flushed, our side is shut for writing, the rest of the body is read and dropped
 * until the client is done, `REFUSAL_LINGER.bytes` were dropped or `REFUSAL_LINGER.ms` passed; then it is closed.
 */
function closeAfterEarlyAnswer(req: IncomingMessage, res: ServerResponse): void {
  const writeHead = res.writeHead as (...args: unknown[]) => ServerResponse
  res.writeHead = ((...args: unknown[]) => {
    if (!req.complete) res.shouldKeepAlive = false
    return writeHead.apply(res, args)
  }) as ServerResponse['writeHead']
  const socket = req.socket as Socket & { destroySoon?: () => void }
  const destroySoon = socket.destroySoon?.bind(socket)
  if (!destroySoon) return
  // Node calls destroySoon once a `Connection: close` response is finished; this request is the
  // last on the socket then, so replacing it for this socket is safe.
  socket.destroySoon = () => {
    if (req.complete || socket.destroyed) return destroySoon()
    const start = socket.bytesRead
    const deadline = Date.now() + REFUSAL_LINGER.ms
    // Polled: the HTTP parser reads this socket natively, so no 'data' event reports its bytes.
    const watch = setInterval(() => {
      if (socket.bytesRead - start > REFUSAL_LINGER.bytes || Date.now() > deadline) socket.destroy()
    }, 50)
    watch.unref()
    socket.once('close', () => clearInterval(watch))
    socket.end()
    req.unpipe()
    // A reader the app left (h3 hands the app `Readable.toWeb(req)`, whose 'data' listener pauses
    // the request again at each chunk once nobody reads the web stream) must not stop the drain.
    req.removeAllListeners('data')
    req.once('end', () => socket.destroy())
    req.resume()
  }
}
