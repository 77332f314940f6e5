import { createRequire } from 'node:module'
import { readFile } from 'node:fs/promises'
import { openApiDocument } from '@mos/sdk/contract'
import type { H3Event } from 'h3'
import type { ServiceContext } from '../context.ts'

/**
 * GET /api/v1/openapi.json (Mos extension): the OpenAPI 3.1 document of the running variant,
 * generated from the contract once per process. Public, like a documentation page: it describes
 * the interface, not the deployment's state (its only deployment facts are the variant, the
 * version and whether metrics need the key).
 */
export function createOpenApiRoute(ctx: ServiceContext): () => Record<string, unknown> {
  let document: Record<string, unknown> | undefined
  return () => (document ??= openApiDocument(ctx.variant, { version: ctx.version, metricsRequireKey: ctx.config.metrics.requireKey }))
}

/** Where the reference page's script is served (the page's only script). */
export const REFERENCE_SCRIPT_PATH = '/api/v1/reference/scalar.js'

/**
 * The reference page may run one script of our own and the styles it injects, fetch the document
 * and call the API from the same origin ("try it"), and nothing else: no other origin, no framing.
 */
const REFERENCE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "worker-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

/** Scalar with its web fonts off: they would come from Scalar's CDN. */
const REFERENCE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Mos API reference</title>
</head>
<body>
<script id="api-reference" data-url="/api/v1/openapi.json" data-configuration='{"withDefaultFonts":false,"hideClientButton":false}'></script>
<script src="${REFERENCE_SCRIPT_PATH}"></script>
</body>
</html>
`

/** GET /api/v1/reference (Mos extension): the API reference rendered by Scalar, from this service alone. */
export function referencePage(event: H3Event): Response {
  event.res.headers.set('Content-Security-Policy', REFERENCE_CSP)
  return new Response(REFERENCE_PAGE, { headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' } })
}

/**
 * GET /api/v1/reference/scalar.js: Scalar's self-contained browser build, read from the installed
 * package (dependencies run from node_modules, see scripts/tsdown-package.ts) once, on first use.
 */
export function createReferenceScript(): () => Promise<Response> {
  let script: Promise<Buffer> | undefined
  return async () => {
    script ??= readFile(createRequire(import.meta.url).resolve('@scalar/api-reference/browser/standalone.js'))
    return new Response(new Uint8Array(await script), {
      headers: { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=3600' },
    })
  }
}
