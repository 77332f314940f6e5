import type { EventHandler, H3, H3Event } from 'h3'
import type { ServiceContext } from '../context.ts'
import { isHead } from '../head-requests.ts'
import { servesApi } from '../queue/create-queue.ts'
import { getBatchRecord, submitBatch } from '../routes/batch.ts'
import { adminLicenseDocument } from '../licensing/license-documents.ts'
import { verifyLicense } from '../routes/license.ts'
import { guarded, routeParam } from '../routes/guarded.ts'
import { submitRoutes } from '../routes/operations.ts'
import { submitTask } from '../routes/submit.ts'
import { cancelTask, deleteTask } from '../routes/task-control.ts'
import { listTasks } from '../routes/task-list.ts'
import { downloadResult, findTask } from '../routes/tasks.ts'
import { ALL_OWNERS, CONSOLE_OWNER } from '../tasks/task-owner.ts'
import { adminTaskView, limitsDocument, maskedConfig, metricsSnapshot, queueDocument } from './admin-views.ts'
import { createConsoleAuth } from './console-auth.ts'
import { consoleConfigDocument } from './console-config.ts'
import { streamConsoleEvents } from './console-events.ts'
import { watchSession } from './session-watch.ts'

/** Whether this process serves the console's routes: enabled, and an API role (a worker serves health only). */
export const servesConsole = (ctx: ServiceContext) => ctx.config.console.enabled && servesApi(ctx.role)

/** A console route's handler, made from the API's route code. */
type ConsoleHandler = (event: H3Event) => unknown
/** Makes a handler need the session (and the guards that count no key). */
type SignedIn = (handler: ConsoleHandler) => EventHandler

/**
 * The web console's server side (docs/console.md): sign-in, the deployment's description, the
 * event stream and /admin/*. Every route but sign-in needs the session cookie, never an API key;
 * the work itself is the API's own route code with the console's owner: it submits as
 * `console:admin` and reads, cancels and deletes every owner's tasks.
 */
export function mountConsole(app: H3, ctx: ServiceContext): void {
  if (!servesConsole(ctx)) return
  const auth = createConsoleAuth(ctx.config, ctx.storage.consoleSessions)
  // Signed in (and, for POST and DELETE, the CSRF token and Origin), then the guards, as the API's keyed routes.
  const session = async (event: H3Event) => {
    await auth.requireSession(event)
    return CONSOLE_OWNER
  }
  const signedIn: SignedIn = (handler) => guarded(session, ctx.access.sessionGuards, handler)

  app.post('/auth/login', (event) => auth.login(event))
  app.post('/auth/logout', (event) => auth.logout(event))
  app.get('/auth/me', (event) => auth.me(event))
  app.get('/auth/session', (event) => auth.session(event))
  app.get(
    '/config',
    signedIn(() => consoleConfigDocument(ctx)),
  )
  app.get(
    '/events',
    signedIn(async (event) => {
      const { cookie } = await auth.requireSession(event)
      return streamConsoleEvents(ctx, event, (ended) => watchSession(ctx.storage.consoleSessions, cookie, ended))
    }),
  )
  mountAdminWork(app, ctx, signedIn)
  mountAdminViews(app, ctx, signedIn)
}

/** Submits as the console's owner; reads, downloads, cancels and deletes any owner's tasks and batches. */
function mountAdminWork(app: H3, ctx: ServiceContext, signedIn: SignedIn): void {
  const id = (event: H3Event) => routeParam(event, 'id')
  for (const route of submitRoutes(ctx.variant, ctx.processing.operations)) {
    app.post(
      `/admin/submit${route.path}`,
      signedIn((event) => submitTask(event, ctx, route, CONSOLE_OWNER)),
    )
  }
  app.post(
    '/admin/submit/batch/compress',
    signedIn((event) => submitBatch(event, ctx, CONSOLE_OWNER)),
  )
  app.get(
    '/admin/tasks',
    signedIn((event) => listTasks(event, ctx, ALL_OWNERS, (task) => adminTaskView(ctx, task))),
  )
  app.get(
    '/admin/tasks/:id',
    signedIn(async (event) => adminTaskView(ctx, await findTask(ctx, id(event), ALL_OWNERS))),
  )
  app.get(
    '/admin/tasks/:id/download',
    // The console asks with a HEAD before it downloads (ui/download-link.tsx): answered from the store's size, as the API's.
    signedIn((event) => downloadResult(ctx, id(event), ALL_OWNERS, isHead(event))),
  )
  app.post(
    '/admin/tasks/:id/cancel',
    signedIn((event) => cancelTask(event, ctx, id(event), ALL_OWNERS)),
  )
  app.delete(
    '/admin/tasks/:id',
    signedIn((event) => deleteTask(event, ctx, id(event), ALL_OWNERS)),
  )
  app.get(
    '/admin/batches/:id',
    signedIn((event) => getBatchRecord(ctx, id(event), ALL_OWNERS)),
  )
}

/** The deployment as the operator sees it: licence (and its activation), limits, queue, metrics, configuration. */
function mountAdminViews(app: H3, ctx: ServiceContext, signedIn: SignedIn): void {
  app.get(
    '/admin/license',
    signedIn(() => adminLicenseDocument(ctx.access.licensing, ctx.variant, ctx.config.limits)),
  )
  // The administrator signed in is the operator: a valid key becomes the active licence, as with an admin key.
  app.post(
    '/admin/license/verify',
    signedIn((event) => verifyLicense(event, ctx, true)),
  )
  app.get(
    '/admin/limits',
    signedIn(() => limitsDocument(ctx)),
  )
  app.get(
    '/admin/queue',
    signedIn(() => queueDocument(ctx)),
  )
  app.get(
    '/admin/metrics',
    signedIn(() => metricsSnapshot(ctx)),
  )
  app.get(
    '/admin/config',
    signedIn(() => maskedConfig(ctx)),
  )
}
