import { OPERATION_ENDPOINTS, type CompletedTask, type SubmitResponse, type Variant } from './contract/index.ts'
import { TaskFailedError } from './errors.ts'
import { createTransport, type RequestOptions } from './request.ts'
import { createBatches, type BatchesResource } from './resources/batches.ts'
import { createLicense, type LicenseResource } from './resources/license.ts'
import { createOperations, type OperationsResource } from './resources/operations.ts'
import { createService, type ServiceResource } from './resources/service.ts'
import { createTaskControl, type TaskControlResource } from './resources/task-control.ts'
import { createTasks, type TasksResource, type WaitForTaskOptions } from './resources/tasks.ts'
import { RETRY_DEFAULTS, type RetryPolicy } from './retry.ts'
import { toFile, type Uploadable, type UploadResolver } from './upload.ts'

/** Options of `createClient`. */
export interface ClientOptions<V extends Variant = Variant> {
  /** Where the service listens, an http(s) URL such as `http://localhost:8080` (a trailing `/api/v1` is taken too). */
  baseURL: string
  /** Sent as `X-API-Key`; every endpoint but health needs it. */
  apiKey?: string
  /** The deployment's variant; it types the variant-dependent documents. See `detectVariant`. */
  variant?: V
  /**
   * Per-attempt time limit in ms (0: none): the longest an attempt may make no progress. On Node,
   * Deno and Bun each chunk of an upload restarts it; in browsers it bounds the whole attempt.
   */
  timeout?: number
  /** Retries after the first attempt (see `isRetryable` for which failures qualify). */
  maxRetries?: number
  /**
   * A fetch implementation; default `globalThis.fetch` (looked up per call). A fetch given here gets
   * each upload as a `FormData` unless `streamUploads` says otherwise.
   */
  fetch?: typeof globalThis.fetch
  /**
   * Whether an upload goes as a stream the SDK feeds (`duplex: 'half'`), so that each chunk sent
   * restarts `timeout`, rather than as a `FormData` (then `timeout` bounds the whole attempt).
   * Default: on Node, Deno and Bun with the runtime's fetch; never with a `fetch` given here, which
   * may not send a stream (node-fetch sends the text `[object ReadableStream]`). Set it for a fetch
   * that passes the request on to the runtime's own.
   */
  streamUploads?: boolean
  /** Backoff tuning. */
  retryPolicy?: Partial<RetryPolicy>
}

export const CLIENT_DEFAULTS = {
  timeout: 120_000,
  maxRetries: 2,
} as const

/**
 * Submit-and-wait helpers, one per submit call (`compress` → `compressAndWait`), with its params:
 * they resolve with the completed record, or throw `TaskFailedError`.
 */
export type AndWaitHelpers<U> = {
  [K in keyof OperationsResource<U> as `${K}AndWait`]: (
    params: Parameters<OperationsResource<U>[K]>[0],
    options?: WaitForTaskOptions,
  ) => Promise<CompletedTask>
}

/** A client of one deployment: every endpoint of the contract, flat, typed for variant `V`. */
export type Client<V extends Variant = Variant, U = Uploadable> = ServiceResource<V> &
  LicenseResource<V> &
  OperationsResource<U> &
  TasksResource &
  TaskControlResource &
  BatchesResource<U> &
  AndWaitHelpers<U> & {
    /** The variant given at creation (undefined: not declared). */
    readonly variant: V | undefined
    readonly baseURL: string
  }

/**
 * Creates a client. Give `variant` to get the A or B shape from `health()`, `capabilities()`,
 * `licenseInfo()` and `licenseVerify()`; without it they are typed as the union.
 * @example
 * const mos = createClient({ baseURL: 'http://localhost:8080', apiKey: process.env.MOS_API_KEY, variant: 'A' })
 * const task = await mos.compressAndWait({ file: bytes, filename: 'model.glb', engine: 'draco' })
 * const result = await mos.download(task.task_id)
 */
export function createClient<V extends Variant = Variant>(options: ClientOptions<V>): Client<V> {
  return createClientWith<V, Uploadable>(options, toFile)
}

/**
 * Like `createClient`, with the upload inputs a runtime adds (how `@mos/sdk/node` accepts paths
 * and Node streams without the main entry importing anything Node-only).
 */
export function createClientWith<V extends Variant, U>(options: ClientOptions<V>, resolveUpload: UploadResolver<U>): Client<V, U> {
  if (!options.baseURL) throw new TypeError('[mos] createClient needs a baseURL, e.g. http://localhost:8080')
  const transport = createTransport({
    baseURL: options.baseURL,
    apiKey: options.apiKey,
    timeout: options.timeout ?? CLIENT_DEFAULTS.timeout,
    maxRetries: options.maxRetries ?? CLIENT_DEFAULTS.maxRetries,
    fetch: options.fetch,
    streamUploads: options.streamUploads,
    retryPolicy: { ...RETRY_DEFAULTS, ...options.retryPolicy },
  })
  const operations = createOperations(transport, resolveUpload)
  const tasks = createTasks(transport)

  function andWait<P>(submit: (params: P, options?: RequestOptions) => Promise<SubmitResponse>) {
    return async (params: P, waitOptions: WaitForTaskOptions = {}): Promise<CompletedTask> => {
      const { onProgress, pollIntervalMs, timeoutMs, ...request } = waitOptions
      const { task_id } = await submit(params, request)
      const task = await tasks.waitForTask(task_id, waitOptions)
      if (task.status === 'failed') throw new TaskFailedError(task)
      return task
    }
  }

  // One `…AndWait` per submit call of the contract's table, as the `AndWaitHelpers` type maps them.
  const andWaitHelpers = Object.fromEntries(
    OPERATION_ENDPOINTS.map(({ method }) => [
      `${method}AndWait`,
      andWait(operations[method] as (params: unknown, options?: RequestOptions) => Promise<SubmitResponse>),
    ]),
  ) as AndWaitHelpers<U>

  return {
    variant: options.variant,
    baseURL: options.baseURL,
    ...createService<V>(transport),
    ...createLicense<V>(transport),
    ...operations,
    ...tasks,
    ...createTaskControl(transport),
    ...createBatches(transport, resolveUpload),
    ...andWaitHelpers,
  }
}
