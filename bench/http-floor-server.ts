// The overhead section's floor (http-floor.ts), in a process of its own as the service is: a bare
// node:http server that does only what every service storing an upload must do. It parses the
// multipart body with the service's own form parser, writes the file part with its fs file store, answers a
// poll, and streams a stored file back. It keeps no records, queues nothing and runs no engine.
import { createReadStream, mkdtempSync, rmSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createFsFileStore } from '../packages/server/src/storage/fs-file-store.ts'
import { createFormParser } from '../packages/server/src/uploads/form-parser.ts'

const dir = mkdtempSync(join(tmpdir(), 'mos-floor-'))
const files = createFsFileStore(dir)
let uploads = 0
let stored: string | undefined

async function receive(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const key = `uploads/${uploads++}/input`
  const writes: Promise<number>[] = []
  const parser = createFormParser(String(req.headers['content-type']), {
    field: () => undefined,
    file() {
      const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>()
      const writer = writable.getWriter()
      writes.push(files.write(key, readable))
      return { push: (chunk) => void writer.write(chunk), end: () => void writer.close() }
    },
  })
  for await (const chunk of req as AsyncIterable<Uint8Array>) {
    const refused = parser.write(chunk)
    if (refused) throw new Error(refused)
  }
  const refused = parser.end()
  if (refused) throw new Error(refused)
  await Promise.all(writes)
  stored = key
  answer(res, { task_id: String(uploads) })
}

/**
 * The first `bytes` of the newest upload: a result of the size the service sent back. The upload is
 * removed once sent (the earlier ones would only fill the disk), after the response: the service
 * does not delete files while it answers either.
 */
function download(res: ServerResponse, bytes: number): void {
  const key = stored!
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes })
  res.on('finish', () => void files.remove(key))
  createReadStream(files.localPath!(key), { end: bytes - 1 }).pipe(res)
}

function answer(res: ServerResponse, body: unknown): void {
  const json = JSON.stringify(body)
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) })
  res.end(json)
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://floor')
  const fail = (error: Error) => {
    res.writeHead(500)
    res.end(error.message)
  }
  if (req.method === 'POST') return void receive(req, res).catch(fail)
  if (url.pathname === '/poll') return answer(res, { status: 'completed' })
  if (url.pathname === '/download' && stored) return download(res, Number(url.searchParams.get('bytes')))
  res.writeHead(404)
  res.end()
})

process.on('SIGTERM', () => {
  rmSync(dir, { recursive: true, force: true })
  process.exit(0)
})
server.listen(0, '127.0.0.1', () => {
  const address = server.address()
  process.send!({ port: typeof address === 'object' && address ? address.port : 0 })
})
