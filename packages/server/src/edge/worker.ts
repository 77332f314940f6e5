import { ERROR_TEXTS } from '@mos/sdk/contract'
import { createApp } from '../app.ts'
import { ConfigError, loadConfig } from '../config/load.ts'
import type { Config } from '../config/schema.ts'
import { createServiceContext, type ServiceContext } from '../context.ts'
import { checkDeployment, queueRedisUrl } from '../queue/create-queue.ts'
import { filesDriverOf } from '../storage/create-storage.ts'
import { createConsoleLogger } from './console-logger.ts'
import { lingeringRequest } from './unread-body.ts'
import { errorText } from '../error-text.ts'

/** The part of a Worker's `ExecutionContext` the entry uses. */
export interface WorkerExecutionContext {
  waitUntil(promise: Promise<unknown>): void
}

/** A Worker's bindings: the `SERVICE__*` settings as text (vars and secrets), anything else ignored. */
export type WorkerEnv = Record<string, unknown>

/**
 * The API role as a Worker (workerd, Cloudflare Workers): the same h3 app the Node, Deno and Bun
 * processes serve, in front of the same Node workers, Redis and S3.
 *
 * A Worker may not use a socket opened by another request ("Cannot perform I/O on behalf of a
 * different request": a command sent on it never completes, measured on workerd 2026-07-30), so
 * each request gets its own service context, whose Redis connections open on first use and close
 * once its response has been sent. What holds no I/O is made once per isolate: the settings.
 */
export default {
  async fetch(request: Request, env: WorkerEnv, execution: WorkerExecutionContext): Promise<Response> {
    let config: Config
    try {
      config = settingsOf(env)
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error
      console.log(JSON.stringify({ level: 'fatal', time: new Date().toISOString(), msg: `configuration error: ${error.message}` }))
      return Response.json({ error: `internal error: configuration error: ${error.message}` }, { status: 500 })
    }
    const logger = createConsoleLogger({ level: config.log.level, base: { role: 'api', runtime: 'workerd' } })
    const context = createServiceContext(config, { logger })
    const lingering = lingeringRequest(request)
    let response: Response
    try {
      response = await createApp(context).fetch(lingering.request)
    } catch (error) {
      logger.error({ error: errorText(error) }, 'request handler failed')
      response = Response.json({ error: ERROR_TEXTS.internal('request handler failed') }, { status: 500 })
    }
    const answer = await lingering.answer(response, execution)
    if (answer === response) return closeAfterResponse(response, context, execution)
    // A refusal answered from memory (the unread body is dropped behind it): the context is done with.
    execution.waitUntil(context.close({ drain: false }).catch(() => undefined))
    return answer
  },
}

/** The isolate's settings, or why they cannot run (kept too: the bindings stay wrong until redeployed). */
let settings: { env: WorkerEnv; config: Config } | { env: WorkerEnv; error: ConfigError } | undefined

/** The configuration from the bindings, parsed once per isolate (the bindings do not change within one); a bad one throws the same ConfigError each time. */
function settingsOf(env: WorkerEnv): Config {
  if (settings?.env !== env) {
    try {
      settings = { env, config: parseSettings(env) }
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error
      settings = { env, error }
    }
  }
  if ('error' in settings) throw settings.error
  return settings.config
}

/**
 * The configuration from the bindings. The role defaults to `api`, the only one a Worker takes; any other stops with the message
 * every runtime gives. An API role needs its keys set: there is no file to keep a development key
 * in. Records and files must be where the Node workers read them (Redis or S3, and S3). Variant A's
 * rate limit counts in Redis (SERVICE__RATE_LIMIT__REDIS_URL, else the queue's).
 */
function parseSettings(env: WorkerEnv): Config {
  const strings = Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => typeof entry[1] === 'string'))
  const config = loadConfig({ SERVICE__SERVER__ROLE: 'api', ...strings })
  checkDeployment(config)
  if (config.auth.apiKeys.length === 0)
    throw new ConfigError('SERVICE__AUTH__API_KEYS must be set on a Worker (no development key is made there)')
  // A Worker has no folder the Node workers share (workerd's node:fs is a virtual one of its own),
  // and `memory` lasts one request.
  if (config.storage.driver === 'fs' || config.storage.driver === 'memory')
    throw new ConfigError(`SERVICE__STORAGE__DRIVER=${config.storage.driver} cannot run on workerd: keep records in redis or s3`)
  if (filesDriverOf(config.storage) !== 's3')
    throw new ConfigError(`SERVICE__STORAGE__FILES_DRIVER=${filesDriverOf(config.storage)} cannot run on workerd: keep files in s3`)
  // A count kept "in this process" would last one request on a Worker: it counts in the queue's Redis.
  config.rateLimit.redisUrl ||= queueRedisUrl(config)
  return config
}

/**
 * Closes the request's context once its response body is sent or dropped: long polls and event
 * streams use the context's Redis connections while they stream.
 */
function closeAfterResponse(response: Response, context: ServiceContext, execution: WorkerExecutionContext): Response {
  const close = () => context.close({ drain: false }).catch(() => undefined)
  if (!response.body) {
    execution.waitUntil(close())
    return response
  }
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>()
  execution.waitUntil(
    response.body
      .pipeTo(writable)
      .catch(() => undefined)
      .then(close),
  )
  return new Response(readable, response)
}
