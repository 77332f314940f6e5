import { redirect, type H3 } from 'h3'
import { ApiError } from '../errors.ts'

/** Where the console is served (as in routes/console-page.ts). */
const CONSOLE_PATH = '/console'

/**
 * `src/routes/console-page.ts` in a Worker bundle. The console's page is a folder of built files
 * (`packages/console/dist`) that a Node process reads from disk; a Worker has no disk, so the page's
 * paths answer 503 saying where the page is served. The console's API (mounted by
 * console/mount-console.ts) is served by the Worker as by every runtime.
 */
export function mountConsolePage(app: H3): void {
  app.get('/', () => redirect(`${CONSOLE_PATH}/`, 302))
  app.get(`${CONSOLE_PATH}/**`, () => {
    throw new ApiError(
      503,
      "the console's page is not served by a Worker: serve packages/console/dist as the Worker's static assets, or open the console on a Node, Deno or Bun API process",
    )
  })
}
