// The overhead section's floor (http-floor.ts), in a process of its own as the service is: a bare
// node:http server that does only what every service storing an upload must do. It parses the
// multipart body with busboy, streams the file part to disk (beside its key, then renamed, in 1 MB
// batches, as the fs file store does), answers a poll, and streams a stored file back. It keeps no
// records, queues nothing and runs no engine.
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs'
import { mkdir, rename, rm } from 'node:fs/promises'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import busboy from 'busboy'

const dir = mkdtempSync(join(tmpdir(), 'mos-floor-'))
let uploads = 0
let stored: string | undefined

async function receive(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const folder = join(dir, String(uploads++))
  const parser = busboy({ headers: req.headers })
  const writes: Promise<void>[] = []
  parser.on('file', (_name, stream) => {
    writes.push((async () => {
      await mkdir(folder, { recursive: true })
      const temp = join(folder, '.part')
      await pipeline(stream, createWriteStream(temp, { highWaterMark: 1 << 20 }))
      await rename(temp, join(folder, 'input'))
    })())
  })
  await new Promise<void>((resolve, reject) => {
    parser.on('close', resolve)
    parser.on('error', reject)
    req.pipe(parser)
  })
  await Promise.all(writes)
  stored = folder
  answer(res, { task_id: String(uploads) })
}

/**
 * The first `bytes` of the newest upload: a result of the size the service sent back. The upload is
 * removed once sent (the earlier ones would only fill the disk), after the response: the service
 * does not delete files while it answers either.
 */
function download(res: ServerResponse, bytes: number): void {
  const folder = stored!
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes })
  res.on('finish', () => void rm(folder, { recursive: true, force: true }))
  createReadStream(join(folder, 'input'), { end: bytes - 1 }).pipe(res)
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
