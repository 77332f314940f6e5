import { defineHandler, getRouterParam, type H3Event } from 'h3'
import type { Guard } from '../context.ts'

/** A route parameter as the client meant it (percent-decoded), or '' when the route has none of that name. */
export const routeParam = (event: H3Event, name: string) => decodeURIComponent(getRouterParam(event, name) ?? '')

/**
 * A handler behind its caller's check and the guards, in that order: `identify` names the caller
 * (the API key; for the console, its owner once the session is checked) or throws the contract's
 * error, then each guard (rate limit, licence) sees the request and that name, then the handler runs.
 * The API's keyed routes and the console's signed-in routes are both made by it, so a guard added
 * to the service reaches both.
 */
export function guarded(
  identify: (event: H3Event) => Promise<string>,
  guards: readonly Guard[],
  handler: (event: H3Event, caller: string) => unknown,
) {
  return defineHandler(async (event) => {
    const caller = await identify(event)
    for (const guard of guards) await guard(event, caller)
    return handler(event, caller)
  })
}
