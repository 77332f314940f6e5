import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, extname, join, normalize, sep } from 'node:path'
import { ERROR_TEXTS } from '@mos/sdk/contract'
import { redirect, type H3, type H3Event } from 'h3'
import { ApiError } from '../errors.ts'

/** Where the console is served; its Vite build uses the same base (packages/console/vite.config.ts). */
export const CONSOLE_PATH = '/console'

/**
 * The console's own policy: everything from this origin, plus `blob:` for the model object URLs and
 * the decoders' workers, `data:` for the images and buffers a glTF embeds, and `'wasm-unsafe-eval'`
 * for the Draco, Basis and meshopt WebAssembly decoders. No inline script, no other origin, no framing.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "worker-src 'self' blob:",
  "connect-src 'self' blob: data:",
  "img-src 'self' blob: data:",
  "style-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

/**
 * The console build's KTX2 transcoder worker (packages/console/build/transcoder-worker.ts writes it;
 * packages/console/src/viewer/transcoder-worker-file.ts names it for the page).
 */
export const TRANSCODER_WORKER_FILE = 'basis-transcoder-worker.js'

/**
 * The transcoder worker's own policy. The Basis transcoder's embind glue builds functions with
 * `new Function`, which the page's script-src refuses; a worker started from a same-origin URL runs
 * under the policy of its own response, not the page's, so eval is allowed here and nowhere else.
 * Weighed: the worker has no DOM, fetches nothing (default-src 'none': the page hands it the wasm),
 * and evaluates only strings the transcoder's own glue builds; 'unsafe-eval' on the page would open
 * eval to every script there, where an injection could reach the session's CSRF token. The other way
 * out, a transcoder built without eval (emscripten's DYNAMIC_EXECUTION=0), is a build of our own to
 * keep in step with three's loader.
 */
export const TRANSCODER_WORKER_CSP = "default-src 'none'; script-src 'unsafe-eval' 'wasm-unsafe-eval'"

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  // instantiateStreaming compiles a decoder only when it arrives as application/wasm.
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
}

/**
 * The console's compiled build, found through its package (a dependency of the server), so it is
 * the same wherever the service is started from.
 */
export function consoleDistFolder(): string {
  return join(dirname(createRequire(import.meta.url).resolve('@mos/console/package.json')), 'dist')
}

/** A file of the build, or undefined when the path leaves the build or names nothing there. */
async function readBuildFile(dist: string, relative: string): Promise<Buffer | undefined> {
  const path = normalize(join(dist, relative))
  if (path !== dist && !path.startsWith(dist + sep)) return undefined
  try {
    return await readFile(path)
  } catch {
    return undefined
  }
}

function answer(event: H3Event, body: Buffer, path: string, cacheControl: string): Response {
  // After the HTTP policy's middleware, which set the API's `default-src 'none'; sandbox` on every answer.
  event.res.headers.set('Content-Security-Policy', path === TRANSCODER_WORKER_FILE ? TRANSCODER_WORKER_CSP : CONSOLE_CSP)
  return new Response(new Uint8Array(body), {
    headers: { 'content-type': CONTENT_TYPES[extname(path)] ?? 'application/octet-stream', 'cache-control': cacheControl },
  })
}

/**
 * GET /console/… serves the single-page console from its compiled build: `assets/*` (content-hashed
 * names, cached for good), other files of the build (the decoders), and `index.html` for every path
 * without a dot (the app's own pages: /console/, /console/admin). GET / on the API redirects there.
 */
export function mountConsolePage(app: H3, dist = consoleDistFolder()): void {
  const index = async (event: H3Event) => {
    const page = await readBuildFile(dist, 'index.html')
    if (!page) throw new ApiError(503, 'the console is not built: run `npm run build` (packages/console)')
    return answer(event, page, 'index.html', 'no-cache')
  }
  app.get('/', () => redirect(`${CONSOLE_PATH}/`, 302))
  // One route for /console and below: the router matches /console and /console/ alike.
  app.get(`${CONSOLE_PATH}/**`, async (event) => {
    if (event.url.pathname === CONSOLE_PATH) return redirect(`${CONSOLE_PATH}/`, 302)
    let relative: string
    try {
      relative = decodeURIComponent(event.url.pathname.slice(CONSOLE_PATH.length + 1))
    } catch {
      throw new ApiError(404, ERROR_TEXTS.routeNotFound(event.url.pathname))
    }
    const last = relative.split('/').at(-1) ?? ''
    if (!last.includes('.')) return index(event)
    const file = await readBuildFile(dist, relative)
    if (!file) throw new ApiError(404, ERROR_TEXTS.routeNotFound(event.url.pathname))
    const immutable = relative.startsWith('assets/')
    return answer(event, file, relative, immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
  })
}
