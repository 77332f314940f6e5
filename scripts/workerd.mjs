// The API role on workerd (`npm run start:api:workerd`): builds the Worker bundle, writes a workerd
// configuration for it and starts `workerd serve`, with the same SERVICE__* settings (and .env) as
// `npm start`. The binary comes from the npm registry (the `workerd` package's platform packages,
// `@cloudflare/workerd-linux-64` and the others), as Deno's and Bun's do. Plain JavaScript.
import { spawn } from 'node:child_process'
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildWorker } from './build-worker.mjs'

const require = createRequire(import.meta.url)

/**
 * The workerd binary and the compatibility date it was released with (`1.20260730.1` → 2026-07-30):
 * the newest date it knows, so the Worker gets every `nodejs_compat` module it has (node:net among them).
 * @returns {{ binary: string, compatibilityDate: string } | undefined}
 */
export function workerdRuntime() {
  try {
    const { version } = require('workerd/package.json')
    const binary = require('workerd').default
    const [, date] = /^\d+\.(\d{8})\./.exec(version) ?? []
    if (!date || !existsSync(binary)) return undefined
    return { binary, compatibilityDate: `${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6)}` }
  } catch {
    return undefined
  }
}

/** Variables the Worker gets as text bindings: its settings, and the AWS convention's keys S3 falls back to. */
const BOUND = /^(SERVICE__|AWS_(ACCESS_KEY_ID|SECRET_ACCESS_KEY|SESSION_TOKEN)$)/

/**
 * V8's young generation capped at 1 MB. An upload arrives as thousands of small ArrayBuffers whose
 * bytes live outside the heap: with workerd's default young generation they outlived many
 * megabytes before a scavenge freed them, and RSS climbed with each upload (300 MB streamed to S3:
 * +155 MB, then +84 and +21 more on the next two, 55 → 312 MB; a Worker only draining the body grew
 * 106 MB). Capped, the first upload took +103 MB and the next two +3 and +9 (measured 2026-11-25,
 * workerd 1.20260730.1). Cloudflare's own platform sets its isolates' heap itself.
 */
export const WORKERD_V8_FLAGS = ['--max-semi-space-size=1']

/**
 * workerd's configuration (Cap'n Proto text) for the bundle: one Worker with `nodejs_compat`, its
 * settings as text bindings, an HTTP socket, outbound connections allowed to private and local
 * addresses (Redis and S3 of a self-hosted deployment; workerd's default is public addresses only),
 * and the V8 flags above.
 * @param {{ env: Record<string, string | undefined>, host: string, port: number, compatibilityDate: string, bundle: string }} options
 */
export function workerdConfig({ env, host, port, compatibilityDate, bundle }) {
  const text = (value) => JSON.stringify(String(value))
  const bindings = Object.entries(env)
    .filter(([name, value]) => BOUND.test(name) && value !== undefined)
    .map(([name, value]) => `    (name = ${text(name)}, text = ${text(value)}),`)
  return `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  v8Flags = [${WORKERD_V8_FLAGS.map(text).join(', ')}],
  services = [
    (name = "mos", worker = .mos),
    (name = "outbound", network = (allow = ["public", "private", "local"], tlsOptions = (trustBrowserCas = true))),
  ],
  sockets = [ (name = "http", address = ${text(`${host.includes(':') ? `[${host}]` : host}:${port}`)}, http = (), service = "mos") ],
);

const mos :Workerd.Worker = (
  modules = [ (name = "worker.js", esModule = embed ${text(bundle)}) ],
  compatibilityDate = ${text(compatibilityDate)},
  compatibilityFlags = ["nodejs_compat"],
  globalOutbound = "outbound",
  bindings = [
${bindings.join('\n')}
  ],
);
`
}

/**
 * Binds `port` on `host` for a moment and lets it go, resolving with the port bound (a free one for 0:
 * workerd needs a number, it has no "any port" that it reports back). workerd itself meets a taken
 * port or a host it cannot resolve with a fatal stack of its own internals; here they get the words
 * `npm start` has for them.
 */
async function bindable(host, port) {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', (error) =>
      reject(
        new Error(
          error.code === 'EADDRINUSE'
            ? `port ${port} on ${host} is already in use`
            : `cannot listen on ${host}:${port} (SERVICE__SERVER__HOST, SERVICE__SERVER__PORT): ${error.message}`,
        ),
      ),
    )
    server.listen(port, host, () => {
      const bound = server.address().port
      server.close(() => resolve(bound))
    })
  })
}

/**
 * The settings as the Worker will read them (the API role by default), checked now with the
 * server's own rules, so a bad value stops start-up naming the setting, as `npm start` does, where
 * a port of 'abc' reached workerd's configuration and failed there as a DNS lookup. The build
 * `prestart:api:workerd` ensures provides the loader.
 * @param {Record<string, string | undefined>} env
 */
async function workerSettings(env) {
  const { loadConfig, ConfigError } = await import('../packages/server/dist/config/load.js')
  // The whole environment, not only the bound variables, so a setting spelled with other separators is refused here too.
  try {
    return loadConfig({ SERVICE__SERVER__ROLE: 'api', ...env })
  } catch (error) {
    throw error instanceof ConfigError ? new Error(`configuration error: ${error.message}`) : error
  }
}

/**
 * Starts the API role on workerd with `env` (SERVICE__* settings; SERVICE__SERVER__PORT=0 picks a
 * free port) and resolves once it answers, with the child process and its address. A bad setting,
 * a taken port or a host it cannot listen on rejects before workerd starts, in `npm start`'s words.
 * @param {Record<string, string | undefined>} env
 * @param {{ stdio?: import('node:child_process').StdioOptions }} [options]
 */
export async function startWorkerd(env, options = {}) {
  const runtime = workerdRuntime()
  if (!runtime) throw new Error('no workerd binary: `npm install` installs it (the workerd package, a dev dependency)')
  const { host, port: requested } = (await workerSettings(env)).server
  // A small window remains between this check and workerd's own bind; workerd exiting then is reported below.
  const port = await bindable(host, requested)
  // Its own folder: the configuration embeds the bundle by a path relative to itself.
  const dir = mkdtempSync(join(tmpdir(), 'mos-workerd-'))
  copyFileSync(await buildWorker(), join(dir, 'worker.js'))
  writeFileSync(
    join(dir, 'config.capnp'),
    workerdConfig({ env, host, port, compatibilityDate: runtime.compatibilityDate, bundle: 'worker.js' }),
  )
  const child = spawn(runtime.binary, ['serve', join(dir, 'config.capnp')], { stdio: options.stdio ?? 'inherit' })
  child.on('exit', () => rmSync(dir, { recursive: true, force: true }))
  const probeHost = ['0.0.0.0', '::', '[::]'].includes(host) ? '127.0.0.1' : host
  const url = `http://${probeHost.includes(':') ? `[${probeHost}]` : probeHost}:${port}`
  try {
    await answers(url, child)
  } catch (error) {
    child.kill('SIGKILL')
    throw error
  }
  return { child, url, host, port, compatibilityDate: runtime.compatibilityDate }
}

/** Waits until the Worker answers its health with 200 (up to 60 s); a configuration error or an exit rejects. */
async function answers(url, child) {
  let exited
  let last = 'no answer'
  child.once('exit', (code, signal) => (exited = code ?? signal))
  for (const started = Date.now(); Date.now() - started < 60_000; await new Promise((r) => setTimeout(r, 100))) {
    if (exited !== undefined) throw new Error(`workerd exited (${exited}) before answering`)
    const response = await fetch(`${url}/api/v1/health`).catch(() => undefined)
    if (!response) continue
    const body = await response.text()
    if (response.ok) return
    if (response.status === 500 && body.includes('configuration error')) throw new Error(JSON.parse(body).error)
    last = `${response.status} ${body.slice(0, 500)}`
  }
  throw new Error(`workerd did not answer its health with 200 in 60 s (last: ${last})`)
}

/** `.env` of the working directory under the environment (a variable set in the environment wins), as `npm start` reads it. */
export function withDotEnv(env, dir = process.cwd()) {
  const file = join(dir, '.env')
  if (!existsSync(file)) return env
  const { parseEnv } = require('node:util')
  return { ...parseEnv(readFileSync(file, 'utf8')), ...env }
}
