import { API_PREFIX, ERROR_TEXTS } from '@mos/sdk/contract'
import { H3, type H3Event } from 'h3'
import { createKeyCheck } from './auth.ts'
import { mountConsole, servesConsole } from './console/mount-console.ts'
import type { ServiceContext } from './context.ts'
import { ApiError, renderError } from './errors.ts'
import { createRequestLog } from './logging/request-log.ts'
import { isHead } from './head-requests.ts'
import { applyHttpPolicy } from './http-policy.ts'
import { getBatchRecord, submitBatch } from './routes/batch.ts'
import { capabilitiesDocument } from './routes/capabilities.ts'
import { mountConsolePage } from './routes/console-page.ts'
import { healthDocument } from './routes/health.ts'
import { licenseInfo, verifyLicense } from './routes/license.ts'
import { metricsResponse } from './routes/metrics.ts'
import { guarded, routeParam } from './routes/guarded.ts'
import { createOpenApiRoute, createReferenceScript, REFERENCE_SCRIPT_PATH, referencePage } from './routes/openapi.ts'
import { mountProbes, PROBE_PATHS } from './routes/probes.ts'
import { RESERVED_ROUTES, submitRoutes } from './routes/operations.ts'
import { submitTask } from './routes/submit.ts'
import { downloadResult } from './routes/tasks.ts'
import { cancelTask, deleteTask } from './routes/task-control.ts'
import { streamTaskEvents } from './routes/task-events.ts'
import { listTasks } from './routes/task-list.ts'
import { readTaskRecord } from './routes/task-wait.ts'
import { keyOwner } from './tasks/task-owner.ts'

/** `owner`: the key's `keyOwner`, which tasks and batches record and reads check. */
type KeyedHandler = (event: H3Event, apiKey: string, owner: string) => unknown
/** Wraps a business handler in the key check and the guards. */
type Keyed = (handler: KeyedHandler) => ReturnType<typeof guarded>

/**
 * Builds the h3 app over a service context. No I/O happens here: tests call `app.fetch(request)`
 * in-process, `main.ts` puts it behind a listening server.
 */
export function createApp(ctx: ServiceContext): H3 {
  const app = createLoggedApp(ctx)
  mountProbes(app, ctx)

  const checkKey = createKeyCheck(ctx.access.keys, ctx.config)
  // Business endpoints: key first, then the guards (rate limit, licence), then the handler.
  const keyed: Keyed = (handler) =>
    guarded(checkKey, ctx.access.guards, async (event, apiKey) => handler(event, apiKey, await keyOwner(apiKey)))

  mountDescriptionRoutes(app, ctx, keyed)
  mountOperationRoutes(app, ctx, keyed)
  mountTaskRoutes(app, ctx, keyed)
  mountBatchAndLicenseRoutes(app, ctx, keyed)

  // Whether a scraper needs the key is the operator's choice (SERVICE__METRICS__REQUIRE_KEY).
  app.get(`${API_PREFIX}/metrics`, ctx.config.metrics.requireKey ? keyed(() => metricsResponse(ctx)) : () => metricsResponse(ctx))

  // The web console's sign-in, description, events and /admin/* (docs/console.md): session cookie, never a key.
  mountConsole(app, ctx)
  // Its page: the compiled build under /console, and / redirects there.
  if (servesConsole(ctx)) mountConsolePage(app)

  // Last: HEAD, security headers, CORS and the 405s are derived from the routes above.
  applyHttpPolicy(app, { corsOrigins: ctx.config.server.corsOrigins })

  return app
}

/** The app with its hooks: each request logged, each response counted, every error rendered once. */
function createLoggedApp(ctx: ServiceContext): H3 {
  const requests = createRequestLog({ logger: ctx.observability.logger, quietPaths: PROBE_PATHS })
  return new H3({
    // h3 would print each unhandled error with console.error, a multi-line dump among the JSON lines
    // log collectors read; the request's own line carries its error and stack instead (errors.ts).
    silent: true,
    onRequest: requests.onRequest,
    onError: (error, event) => renderError(error, event),
    onResponse: (response, event) => {
      ctx.observability.metrics.responseSent(event.req.method, response.status)
      requests.onResponse(response, event)
    },
  })
}

/** What the service is: health, its interface described and rendered, its capabilities. */
function mountDescriptionRoutes(app: H3, ctx: ServiceContext, keyed: Keyed): void {
  app.get(`${API_PREFIX}/health`, () => healthDocument(ctx))
  // The interface described and rendered (Mos extensions): public, like a documentation page.
  app.get(`${API_PREFIX}/openapi.json`, createOpenApiRoute(ctx))
  app.get(`${API_PREFIX}/reference`, (event) => referencePage(event))
  app.get(REFERENCE_SCRIPT_PATH, createReferenceScript())
  app.get(
    `${API_PREFIX}/capabilities`,
    keyed(() => capabilitiesDocument(ctx)),
  )
}

/** One submit route per operation the variant serves, and 501 for those it reserves. */
function mountOperationRoutes(app: H3, ctx: ServiceContext, keyed: Keyed): void {
  for (const route of submitRoutes(ctx.variant, ctx.processing.operations)) {
    app.post(
      API_PREFIX + route.path,
      keyed((event, _apiKey, owner) => submitTask(event, ctx, route, owner)),
    )
  }
  for (const reserved of RESERVED_ROUTES[ctx.variant]) {
    app.post(
      API_PREFIX + reserved.path,
      keyed(() => {
        throw new ApiError(501, ERROR_TEXTS.notImplemented(reserved.what))
      }),
    )
  }
}

/** A task's record, events and result, and task control. */
function mountTaskRoutes(app: H3, ctx: ServiceContext, keyed: Keyed): void {
  app.get(
    `${API_PREFIX}/tasks/:id`,
    keyed((event, _apiKey, owner) => readTaskRecord(ctx, event, routeParam(event, 'id'), owner)),
  )
  app.get(
    `${API_PREFIX}/tasks/:id/events`,
    keyed((event, _apiKey, owner) => streamTaskEvents(ctx, routeParam(event, 'id'), owner, isHead(event))),
  )
  app.get(
    `${API_PREFIX}/tasks/:id/download`,
    keyed((event, _apiKey, owner) => downloadResult(ctx, routeParam(event, 'id'), owner, isHead(event))),
  )
  // Task control (Mos extensions, docs/api.md): off the contract's paths and methods.
  app.get(
    `${API_PREFIX}/tasks`,
    keyed((event, _apiKey, owner) => listTasks(event, ctx, owner)),
  )
  app.post(
    `${API_PREFIX}/tasks/:id/cancel`,
    keyed((event, _apiKey, owner) => cancelTask(event, ctx, routeParam(event, 'id'), owner)),
  )
  app.delete(
    `${API_PREFIX}/tasks/:id`,
    keyed((event, _apiKey, owner) => deleteTask(event, ctx, routeParam(event, 'id'), owner)),
  )
}

/** Batch submit and read, and the licence's verify and info. */
function mountBatchAndLicenseRoutes(app: H3, ctx: ServiceContext, keyed: Keyed): void {
  app.post(
    `${API_PREFIX}/batch/compress`,
    keyed((event, _apiKey, owner) => submitBatch(event, ctx, owner)),
  )
  app.get(
    `${API_PREFIX}/batch/:id`,
    keyed((event, _apiKey, owner) => getBatchRecord(ctx, routeParam(event, 'id'), owner)),
  )
  app.post(
    `${API_PREFIX}/license/verify`,
    keyed(async (event, apiKey) => verifyLicense(event, ctx, (await ctx.access.adminKeys.find(apiKey)) !== undefined)),
  )
  app.get(
    `${API_PREFIX}/license/info`,
    keyed(() => licenseInfo(ctx)),
  )
}
