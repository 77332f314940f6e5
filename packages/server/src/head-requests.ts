import type { H3, H3Event } from 'h3'

/**
 * Registers HEAD on every path served with GET (RFC 9110 §9.3.2: a GET resource answers HEAD with
 * the same status and headers, and no body). h3 falls back from HEAD to a GET route by itself, but
 * only where no route of any method matches first, and the 405 routes of http-policy.ts take every
 * method: HEAD answered 405 while its Allow listed HEAD. applyHttpPolicy calls it, once every GET
 * route is registered and before its 405s.
 *
 * Each HEAD runs the GET route's handler, which may leave out what only a body needs (the download
 * asks the store for the file's size instead of opening it: `isHead`). A body a handler made anyway
 * is cancelled, so a stream (an event stream, a file) lets go of what it holds.
 *
 * @example answerHeadLikeGet(app) // after every app.get(...), before the 405 routes
 */
export function answerHeadLikeGet(app: H3): void {
  const routes = [...app['~routes']]
  const withHead = new Set(routes.filter((route) => route.method === 'HEAD').map((route) => route.route))
  for (const route of routes) {
    if (route.method !== 'GET' || !route.route || withHead.has(route.route)) continue
    app.on('HEAD', route.route, async (event: H3Event) => withoutBody(await route.handler(event)), {
      ...(route.middleware ? { middleware: route.middleware } : {}),
      ...(route.meta ? { meta: route.meta } : {}),
    })
  }
}

/** Whether the request is a HEAD: a handler answers the same status and headers and need not make a body. */
export const isHead = (event: H3Event): boolean => event.req.method === 'HEAD'

/** A Response's status and headers without its body (cancelled); anything else as it is (h3 leaves out its body for HEAD). */
async function withoutBody(result: unknown): Promise<unknown> {
  if (!(result instanceof Response) || !result.body) return result
  await result.body.cancel().catch(() => undefined)
  return new Response(null, { status: result.status, statusText: result.statusText, headers: result.headers })
}
