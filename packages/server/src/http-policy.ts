import { API_KEY_HEADER, ERROR_TEXTS, EXTENSION_HEADERS, RATE_LIMIT_HEADERS } from '@mos/sdk/contract'
import type { H3, H3Event } from 'h3'
import { ApiError } from './errors.ts'
import { answerHeadLikeGet } from './head-requests.ts'
import { securityHeaders } from './security-headers.ts'

export interface HttpPolicyOptions {
  /** Origins a browser may call from (`*` = any); empty = no CORS at all (the default). */
  corsOrigins: readonly string[]
}

/**
 * What a browser script may read from our answers: the rate-limit figures, the download's name,
 * and the extensions' headers (the SDK learns the long poll from Mos-Wait-Max).
 */
const EXPOSED_HEADERS = [
  RATE_LIMIT_HEADERS.limit,
  RATE_LIMIT_HEADERS.remaining,
  RATE_LIMIT_HEADERS.reset,
  RATE_LIMIT_HEADERS.retryAfter,
  'Content-Disposition',
  EXTENSION_HEADERS.waitMax,
  EXTENSION_HEADERS.idempotentReplayed,
].join(', ')
/** The SDK sends an Idempotency-Key with every submit: a preflight refusing it would stop every browser upload. */
const ALLOWED_REQUEST_HEADERS = [API_KEY_HEADER, 'Content-Type', EXTENSION_HEADERS.idempotencyKey].join(', ')
const PREFLIGHT_MAX_AGE_SECONDS = '600'

/**
 * Headers and methods of every request, as h3 middleware plus fallback routes: the security
 * headers, CORS (with a preflight answered before any key is asked for, as browsers send none on
 * it), HEAD wherever GET is served (head-requests.ts), and `405` with `Allow` for a known path
 * asked with a method it does not serve. Call it after every route is registered: HEAD and the
 * 405s are derived from the routes themselves.
 */
export function applyHttpPolicy(app: H3, options: HttpPolicyOptions): void {
  const cors = options.corsOrigins.length > 0
  const anyOrigin = options.corsOrigins.includes('*')
  const fixed = securityHeaders({ cors })
  const allowedOrigin = (origin: string | null) => (origin && (anyOrigin || options.corsOrigins.includes(origin)) ? origin : undefined)
  // Every GET path answers HEAD too, as the Allow headers below say.
  answerHeadLikeGet(app)

  const methodsByPath = new Map<string, Set<string>>()
  for (const route of app['~routes']) {
    if (!route.method || !route.route) continue
    const methods = methodsByPath.get(route.route) ?? new Set<string>()
    methods.add(route.method)
    // HEAD next to GET in Allow (its route, added above, comes last in the list).
    if (route.method === 'GET') methods.add('HEAD')
    methodsByPath.set(route.route, methods)
  }

  app.use((event: H3Event) => {
    const set = (name: string, value: string) => {
      event.res.headers.set(name, value)
      event.res.errHeaders.set(name, value)
    }
    for (const [name, value] of Object.entries(fixed)) set(name, value)
    if (!cors) return
    const origin = allowedOrigin(event.req.headers.get('origin'))
    // The answer depends on Origin: caches must keep one copy per origin.
    set('Vary', 'Origin')
    if (!origin) return
    set('Access-Control-Allow-Origin', anyOrigin ? '*' : origin)
    set('Access-Control-Expose-Headers', EXPOSED_HEADERS)
    if (event.req.method === 'OPTIONS' && event.req.headers.get('access-control-request-method')) {
      // The router has matched the path already (the 405 route of each path takes any method).
      const methods = methodsByPath.get(event.context.matchedRoute?.route ?? '')
      if (!methods) return // unknown path: the 404 of the router
      // h3 adds the headers set above (security, Vary, origin) to this answer.
      return new Response(null, {
        status: 204,
        headers: {
          'Access-Control-Allow-Methods': [...methods, 'OPTIONS'].join(', '),
          'Access-Control-Allow-Headers': ALLOWED_REQUEST_HEADERS,
          'Access-Control-Max-Age': PREFLIGHT_MAX_AGE_SECONDS,
        },
      })
    }
  })

  // rou3 takes a route of the request's method first, one registered for any method otherwise.
  for (const [path, methods] of methodsByPath) {
    const allow = [...methods, ...(cors ? ['OPTIONS'] : [])].join(', ')
    app.all(path, (event) => {
      throw new ApiError(405, ERROR_TEXTS.methodNotAllowed(event.req.method, event.url.pathname), { Allow: allow })
    })
  }
}
