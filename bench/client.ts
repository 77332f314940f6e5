import { Agent, request } from 'node:http'

/**
 * The benchmark's HTTP client: node:http on kept-alive sockets, a multipart body written as its
 * three parts (no copy of the file), responses read as buffers. On this two-core machine the client
 * shares the cores with the service it measures, so it must cost as little as a client on another
 * machine would cost the service: `fetch` with FormData spent 5–60 ms more per 27 MB upload and a
 * few hundred microseconds more per poll, all of it counted as service time.
 */
export interface BenchClient {
  submit(endpoint: string, file: { name: string; bytes: Uint8Array }, fields: Record<string, string>): Promise<string>
  json(path: string): Promise<unknown>
  download(path: string): Promise<Uint8Array>
  close(): void
}

export function createBenchClient(baseUrl: string, apiKey: string): BenchClient {
  const url = new URL(baseUrl)
  const agent = new Agent({ keepAlive: true, maxSockets: 16 })

  function send(method: string, path: string, parts: Uint8Array[] = [], headers: Record<string, string | number> = {}): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const length = parts.reduce((n, p) => n + p.byteLength, 0)
      const req = request(
        { host: url.hostname, port: url.port, path, method, agent, headers: { 'x-api-key': apiKey, 'content-length': length, ...headers } },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (c: Buffer) => chunks.push(c))
          res.on('end', () => {
            const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
            if (res.statusCode! >= 300) reject(new Error(`${method} ${path}: ${res.statusCode} ${body.toString()}`))
            else resolve(body)
          })
          res.on('error', reject)
        },
      )
      req.on('error', reject)
      for (const part of parts) req.write(part)
      req.end()
    })
  }

  return {
    async submit(endpoint, file, fields) {
      const boundary = `mosbench${Math.random().toString(36).slice(2)}`
      const fieldParts = Object.entries(fields).map(
        ([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`,
      )
      const head = Buffer.from(
        `${fieldParts.join('')}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      )
      const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
      const body = await send('POST', endpoint, [head, file.bytes, tail], { 'content-type': `multipart/form-data; boundary=${boundary}` })
      return (JSON.parse(body.toString()) as { task_id: string }).task_id
    },
    async json(path) {
      return JSON.parse((await send('GET', path)).toString())
    },
    async download(path) {
      return new Uint8Array(await send('GET', path))
    },
    close() {
      agent.destroy()
    },
  }
}
