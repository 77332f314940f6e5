import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, type RunningServer } from '@mos/server'
import { localServiceEnv, throwAwayLicenceEnv } from '../../../../test/support/service-env.ts'
import type { Variant } from '@mos/sdk/contract'

export const API_KEY = 'conformance-test-key-0123'

/**
 * Extra SERVICE__* settings for every server these tests start, as JSON in
 * MOS_CONFORMANCE_SERVER_ENV: how CI runs the same suite on another backend (e.g. the Redis + S3
 * cluster settings) without changing the tests.
 */
const EXTRA_ENV = JSON.parse(process.env.MOS_CONFORMANCE_SERVER_ENV || '{}') as Record<string, string>

/** A professional licence from a throw-away vendor key: the trial's 100 files would run out after two full runs. */
const testLicenseEnv = () => throwAwayLicenceEnv('lic_conformance')

/**
 * Our real service on a free port, in a fresh data folder (env as in the server's own harness),
 * licensed unless `licensed` is false (then the trial applies).
 */
export async function startRealServer(
  variant: Variant,
  extra: Record<string, string> = {},
  licensed = true,
): Promise<RunningServer & { stop(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'mos-conformance-'))
  const server = await startServer({
    env: localServiceEnv({
      variant,
      dataDir: dir,
      apiKeys: API_KEY,
      extra: { ...(licensed ? testLicenseEnv() : {}), ...EXTRA_ENV, ...extra },
    }),
  })
  return Object.assign(server, {
    async stop() {
      await server.close({ drain: false })
      await rm(dir, { recursive: true, force: true })
    },
  })
}

/**
 * One deliberate deviation: `request` may answer instead of the real server (stubs, injected
 * faults), `response` may rewrite what the real server answered. Both see the request with its body.
 */
export interface Deviation {
  request?(request: Request, body: Uint8Array): Promise<Response | undefined> | Response | undefined
  response?(request: Request, response: Response, body: Uint8Array): Promise<Response> | Response
}

export interface Proxy {
  url: string
  close(): Promise<void>
}

async function readBody(req: IncomingMessage): Promise<Uint8Array> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return new Uint8Array(Buffer.concat(chunks))
}

/** A node:http server in front of `target` that applies a deviation (or none). */
export async function startProxy(target: string, deviation: Deviation = {}): Promise<Proxy> {
  const server: Server = createServer(async (req, res) => {
    try {
      const body = await readBody(req)
      const headers = new Headers()
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === 'string' && name !== 'host' && name !== 'connection') headers.set(name, value)
      }
      const method = req.method ?? 'GET'
      const init = { method, headers, ...(method === 'GET' || method === 'HEAD' ? {} : { body: body as Uint8Array<ArrayBuffer> }) }
      const request = new Request(`${target}${req.url}`, init)
      let response = await deviation.request?.(request.clone(), body)
      if (!response) {
        response = await fetch(new Request(`${target}${req.url}`, init))
        if (deviation.response) response = await deviation.response(request.clone(), response, body)
      }
      const out = new Uint8Array(await response.arrayBuffer())
      const outHeaders: Record<string, string> = {}
      response.headers.forEach((value, name) => {
        if (!['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(name)) outHeaders[name] = value
      })
      outHeaders['content-length'] = String(out.byteLength)
      res.writeHead(response.status, outHeaders)
      res.end(out)
    } catch (error) {
      res.writeHead(599, { 'content-type': 'text/plain' })
      res.end(`proxy failure: ${String(error)}`)
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

/** A JSON response with the given status. */
export const json = (body: unknown, status = 200, headers: Record<string, string> = {}) => Response.json(body, { status, headers })

/** The path of a request without the origin. */
export const pathOf = (request: Request) => new URL(request.url).pathname

/** Rewrites a JSON response body (keeping status and headers). */
export async function mapJson(response: Response, map: (body: Record<string, unknown>) => unknown): Promise<Response> {
  const body = (await response.json()) as Record<string, unknown>
  const headers = new Headers(response.headers)
  headers.delete('content-length')
  return new Response(JSON.stringify(map(body)), { status: response.status, headers })
}
