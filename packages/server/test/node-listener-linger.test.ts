import { connect } from 'node:net'
import { H3 } from 'h3'
import { toNodeHandler } from 'h3/node'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { listenNode, type NodeListener } from '../src/node-listener.ts'
import { securityHeaders } from '../src/security-headers.ts'

const MB = 1024 * 1024

/**
 * A route that reads the start of the body through its web stream (as uploads do on every runtime),
 * then refuses the request and leaves the rest unread.
 */
function refusingApp(): H3 {
  const app = new H3()
  app.post('/refuse', async (event) => {
    const reader = event.req.body!.getReader()
    let read = 0
    while (read < 256 * 1024) {
      const next = await reader.read()
      if (next.done) break
      read += next.value.byteLength
    }
    return new Response(JSON.stringify({ error: 'refused' }), { status: 413, headers: { 'content-type': 'application/json' } })
  })
  return app
}

let listener: NodeListener
beforeAll(async () => {
  listener = await listenNode(toNodeHandler(refusingApp()), {
    port: 0,
    host: '127.0.0.1',
    keepAliveTimeoutMs: 65_000,
    headersTimeoutMs: 20_000,
    shutdownGraceMs: 2_000,
    answerHeaders: securityHeaders({ cors: false }),
  })
})
afterAll(() => listener?.close())

it('after an early answer the listener reads off the rest of a body the app read through its web stream, then closes (lingering close)', async () => {
  // Half-open allowed, as a client still sending a body is: the listener shuts its side once the answer
  // is out, and a socket that ends its own side on that FIN would stop sending early (on an idle
  // machine the FIN arrives mid-body) and test nothing.
  const socket = connect({ port: listener.port, host: '127.0.0.1', allowHalfOpen: true })
  let failure: Error | undefined
  socket.on('error', (error) => (failure = error))
  await new Promise((resolve) => socket.once('connect', resolve))
  let answer = ''
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')))
  const closed = new Promise((resolve) => socket.once('close', resolve))
  socket.write('POST /refuse HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n')
  // The whole body goes out whatever the answer: 8 MB, far under the listener's 64 MB drain bound.
  const piece = Buffer.alloc(64 * 1024)
  const total = 8 * MB
  for (let sent = 0; sent < total && !socket.destroyed; sent += piece.length) {
    const framed = Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')])
    if (!socket.write(framed)) await new Promise((resolve) => socket.once('drain', resolve).once('close', resolve))
  }
  socket.end('0\r\n\r\n')
  await closed
  expect(answer).toMatch(/^HTTP\/1\.1 413 /)
  expect(answer).toMatch(/\{"error":"refused"\}/)
  // Read off to its end: every byte was taken and the connection ended cleanly. Without the drain,
  // the body stalls once the socket's buffers fill and the connection is reset at the drain's deadline.
  expect(failure).toBeUndefined()
  expect(socket.bytesWritten).toBeGreaterThan(total)
}, 60_000)
