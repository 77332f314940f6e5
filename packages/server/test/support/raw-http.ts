import { connect } from 'node:net'
import { sleep } from '../../../../test/support/poll.ts'

export interface RawAnswer {
  /** Status of the final answer (a `100 Continue` before it is not counted). */
  status: number
  headers: Record<string, string>
  body: string
  /** Whether the server sent `100 Continue`. */
  continued: boolean
  /** Body bytes the client had handed to the socket when the answer's first byte arrived. */
  writtenBeforeAnswer: number
}

export interface RawRequest {
  port: number
  /** Request line and headers, without the blank line that ends them. */
  head: string
  /** The body, sent in pieces; each piece is framed as a chunk when `chunked`. */
  body?: Iterable<Uint8Array>
  chunked?: boolean
  /** Whether to end the chunked body with its last chunk (false: the body is cut off). */
  finishChunked?: boolean
  /**
   * Pause between pieces, so the server reads as fast as we write and the count of bytes written
   * before the answer is close to what the server read (socket buffers stay near empty).
   */
  paceMs?: number
  /** Wait for `100 Continue` (or an answer) before sending the body. */
  expectContinue?: boolean
  /**
   * Wait up to this long for an answer before sending the body: a server that decides from the
   * headers has answered by then, however busy the machine, so the count of bytes written before
   * the answer measures the server, not the scheduler.
   */
  headStartMs?: number
  timeoutMs?: number
}

/**
 * One HTTP/1.1 request over a raw socket, for what fetch cannot send: bodies cut off, framing that
 * lies, `Expect: 100-continue`. Stops sending as soon as an answer arrives, and reads it to the end.
 */
export async function rawRequest(request: RawRequest): Promise<RawAnswer> {
  const socket = connect(request.port, '127.0.0.1')
  socket.on('error', () => undefined) // a reset after the answer is expected for refused bodies
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject))
  let received = Buffer.alloc(0)
  let written = 0
  let writtenBeforeAnswer: number | undefined
  const ended = new Promise<void>((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk])
      const text = received.toString('latin1')
      const final = text.replace(/^HTTP\/1\.1 100[^\r]*\r\n\r\n/, '')
      if (final.length > 0) writtenBeforeAnswer ??= written
      if (isComplete(final)) resolve()
    })
    socket.on('close', () => resolve())
  })
  socket.write(`${request.head}\r\n\r\n`)
  if (request.expectContinue || request.headStartMs) {
    const deadline = Date.now() + (request.headStartMs ?? 3000)
    while (received.length === 0 && Date.now() < deadline) await sleep(10)
  }
  const answered = () => writtenBeforeAnswer !== undefined || socket.destroyed
  for (const piece of request.body ?? []) {
    if (answered()) break
    const framed = request.chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece
    written += piece.length
    if (!socket.write(framed)) await new Promise((resolve) => socket.once('drain', resolve).once('close', resolve))
    if (request.paceMs) await sleep(request.paceMs)
  }
  if (request.chunked && request.finishChunked !== false && !answered()) socket.write('0\r\n\r\n')
  const timer = setTimeout(() => socket.destroy(), request.timeoutMs ?? 15_000)
  await ended
  clearTimeout(timer)
  socket.destroy()
  return { ...parseAnswer(received.toString('utf8')), writtenBeforeAnswer: writtenBeforeAnswer ?? written }
}

/**
 * Writes `pieces` on a raw socket `paceMs` apart (each a TCP read of its own at the server, as a long
 * request arrives over a real network), and reads everything the server sends until it closes.
 */
export async function sendInPieces(port: number, pieces: (string | Uint8Array)[], paceMs = 50, timeoutMs = 10_000): Promise<string> {
  const socket = connect(port, '127.0.0.1')
  socket.on('error', () => undefined)
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject))
  let received = ''
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')))
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  for (const piece of pieces) {
    if (socket.destroyed) break
    socket.write(piece)
    await sleep(paceMs)
  }
  const timer = setTimeout(() => socket.destroy(), timeoutMs)
  await closed
  clearTimeout(timer)
  return received
}

function isComplete(text: string): boolean {
  const split = text.indexOf('\r\n\r\n')
  if (split < 0) return false
  const head = text.slice(0, split).toLowerCase()
  const rest = text.slice(split + 4)
  const length = /content-length:\s*(\d+)/.exec(head)
  if (length) return Buffer.byteLength(rest) >= Number(length[1])
  if (head.includes('transfer-encoding: chunked')) return rest.endsWith('0\r\n\r\n')
  return false
}

/** Status, headers and body of an answer read off a raw socket (`100 Continue` skipped). */
export function parseAnswer(text: string): Omit<RawAnswer, 'writtenBeforeAnswer'> {
  const continued = /^HTTP\/1\.1 100/.test(text)
  const final = text.replace(/^HTTP\/1\.1 100[^\r]*\r\n\r\n/, '')
  const split = final.indexOf('\r\n\r\n')
  const headLines = (split < 0 ? final : final.slice(0, split)).split('\r\n')
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(headLines[0] ?? '')?.[1] ?? 0)
  const headers: Record<string, string> = {}
  for (const line of headLines.slice(1)) {
    const colon = line.indexOf(':')
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  let body = split < 0 ? '' : final.slice(split + 4)
  if (headers['transfer-encoding'] === 'chunked') body = dechunk(body)
  return { status, headers, body, continued }
}

function dechunk(text: string): string {
  let out = ''
  let rest = text
  for (;;) {
    const line = rest.indexOf('\r\n')
    if (line < 0) return out
    const size = parseInt(rest.slice(0, line), 16)
    if (!size) return out
    out += rest.slice(line + 2, line + 2 + size)
    rest = rest.slice(line + 2 + size + 2)
  }
}

/** A multipart body with one file part, and its boundary. */
export function multipart(
  file: { field?: string; name: string; bytes: Uint8Array },
  fields: Record<string, string> = {},
): { boundary: string; head: Buffer; tail: Buffer; file: Uint8Array } {
  const boundary = `----mos${Math.random().toString(16).slice(2)}`
  let head = ''
  for (const [name, value] of Object.entries(fields))
    head += `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`
  head += `--${boundary}\r\nContent-Disposition: form-data; name="${file.field ?? 'file'}"; filename="${file.name}"\r\nContent-Type: application/octet-stream\r\n\r\n`
  return { boundary, head: Buffer.from(head), tail: Buffer.from(`\r\n--${boundary}--\r\n`), file: file.bytes }
}

/** `total` bytes in pieces of `size` (the same zeroed buffer, so a 20 MB body costs 64 KB). */
export function* pieces(total: number, size = 64 * 1024): Generator<Uint8Array> {
  const buffer = new Uint8Array(size)
  for (let sent = 0; sent < total; sent += size) yield buffer.subarray(0, Math.min(size, total - sent))
}
