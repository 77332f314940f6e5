/**
 * A submit's FormData as a request body the SDK sends itself, chunk by chunk, with its length known
 * before the first byte. Fetch encodes a FormData out of sight (nobody can tell how far an upload
 * got) and, given a stream, sends it chunked without a length. Here the multipart framing (RFC 7578)
 * around parts of known size is computed, so the request keeps its Content-Length (the service
 * refuses a too-large upload from it before reading the body) and every chunk the runtime pulls is
 * reported: the attempt's time limit then means "no progress for N ms", not "the whole upload".
 */

/** A FormData ready to be sent as a stream: its type and length, and a fresh body per attempt. */
export interface MultipartBody {
  /** `multipart/form-data; boundary=…` */
  contentType: string
  /** Exact byte length of every body `open` returns. */
  length: number
  /**
   * A new stream of the whole body (each retry needs its own; the parts are Blobs, read again).
   * `onProgress` is called as each chunk is handed to the runtime; once `signal` aborts, the stream
   * fails with its reason and reads nothing more.
   */
  open(onProgress: () => void, signal?: AbortSignal): ReadableStream<Uint8Array>
}

/** Largest slice read from a part at a time: small enough that progress is seen on a slow link. */
const CHUNK_BYTES = 64 * 1024

/**
 * Encodes `form` as multipart/form-data. Text fields and files (Blobs, possibly disk-backed) are
 * taken as they are; nothing is read until `open`'s stream is pulled.
 * @example const body = multipartBody(form); fetch(url, { method: 'POST', body: body.open(tick, signal), duplex: 'half', signal })
 */
export function multipartBody(form: FormData): MultipartBody {
  const boundary = `----mos-${globalThis.crypto.randomUUID()}`
  const encoder = new TextEncoder()
  const pieces: (Uint8Array | Blob)[] = []
  for (const [name, value] of form.entries()) {
    const disposition = `content-disposition: form-data; name="${escapeName(name)}"`
    if (typeof value === 'string') {
      pieces.push(encoder.encode(`--${boundary}\r\n${disposition}\r\n\r\n${normalizeNewlines(value)}\r\n`))
    } else {
      const type = value.type || 'application/octet-stream'
      pieces.push(encoder.encode(`--${boundary}\r\n${disposition}; filename="${escapeName(value.name)}"\r\ncontent-type: ${type}\r\n\r\n`))
      pieces.push(value, encoder.encode('\r\n'))
    }
  }
  pieces.push(encoder.encode(`--${boundary}--\r\n`))
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    length: pieces.reduce((total, piece) => total + (piece instanceof Blob ? piece.size : piece.byteLength), 0),
    open: (onProgress, signal) => piecesStream(pieces, onProgress, signal),
  }
}

/**
 * The pieces in order, a Blob sliced so that no single chunk holds up progress. It ends itself on
 * `signal`: undici, once the fetch is aborted, goes on pulling the body to its end into the closed
 * connection (a 2 GB file read from disk to the last byte, the process held meanwhile).
 */
function piecesStream(pieces: (Uint8Array | Blob)[], onProgress: () => void, signal?: AbortSignal): ReadableStream<Uint8Array> {
  let index = 0
  let offset = 0
  return new ReadableStream<Uint8Array>({
    start(controller) {
      signal?.addEventListener('abort', () => controller.error(signal.reason), { once: true })
    },
    async pull(controller) {
      // Until a chunk with bytes is handed over: a pull that enqueues nothing is not called again.
      for (;;) {
        // Also between reads: a slice read when the abort came is not handed on.
        if (signal?.aborted) return
        const piece = pieces[index]
        if (!piece) {
          controller.close()
          return
        }
        let chunk: Uint8Array
        if (piece instanceof Blob) {
          chunk = new Uint8Array(await piece.slice(offset, offset + CHUNK_BYTES).arrayBuffer())
          offset += chunk.byteLength
          // An empty slice before the end (the file shrank) ends the part too: fetch then fails on the length.
          if (chunk.byteLength === 0 || offset >= piece.size) [index, offset] = [index + 1, 0]
        } else {
          chunk = piece
          index++
        }
        if (chunk.byteLength === 0) continue
        onProgress()
        controller.enqueue(chunk)
        return
      }
    },
  })
}

/** As browsers and undici escape a field or file name in the part's header (HTML's form encoding). */
function escapeName(name: string): string {
  return name.replace(/\n/g, '%0A').replace(/\r/g, '%0D').replace(/"/g, '%22')
}

/** A text field's line breaks as CRLF, as the form encoding (and undici) sends them. */
function normalizeNewlines(value: string): string {
  return value.replace(/\r(?!\n)|(?<!\r)\n/g, '\r\n')
}

/**
 * Whether this runtime's fetch sends a ReadableStream request body (`duplex: 'half'`) over
 * HTTP/1.1: Node (undici), Deno and Bun do. Browsers send one only over HTTP/2 or later (Chromium)
 * or not at all, which a feature test cannot tell before the request, so they keep the FormData.
 */
export function runtimeStreamsRequestBodies(): boolean {
  const runtime = globalThis as { process?: { versions?: { node?: string } }; Deno?: unknown; Bun?: unknown }
  return Boolean(runtime.process?.versions?.node || runtime.Deno || runtime.Bun)
}
