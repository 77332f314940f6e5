import type * as Engines from '@mos/engines'
import { WORKER_BUILD } from './build-facts.ts'

/**
 * `@mos/engines` as the Worker bundle sees it (the bundler maps the package here). The API role
 * on a Worker runs no task: it queues them for the Node workers. It still builds the parts of the
 * service that name the engines (the context's pool and runner, the submit routes' catalog), so
 * those get an empty pool and the registry's facts from the build, not threads and codecs.
 */

/** A pool with no thread: an API process never runs a job (the queue it creates takes none). */
export const createEnginePool: typeof Engines.createEnginePool = () => ({
  run: async () => ({ ok: false, message: 'tasks do not run on a Worker: the Node workers run them' }),
  active: 0,
  queued: 0,
  threads: 0,
  status: () => ({ liveThreads: 0, recycledThreads: 0, destroyed: false }),
  destroy: async () => undefined,
})

/** Reached only by a task run, which a Worker never starts. */
export const workBudgetMs: typeof Engines.workBudgetMs = () => {
  throw new Error('[mos] [worker] tasks do not run on a Worker')
}

export const describeEngines: typeof Engines.describeEngines = () => WORKER_BUILD.engines

export const operationFormats: typeof Engines.operationFormats = (name) => [...(WORKER_BUILD.operations[name]?.formats ?? [])]

/**
 * The one thing the submit routes' catalog reads of an operation is its option keys (the shape of
 * its option schema); the schema itself parses options where the Node worker runs the task.
 */
export const findOperation = ((name: string) => {
  const operation = WORKER_BUILD.operations[name]
  return operation && { name, options: { shape: Object.fromEntries(operation.options.map((key) => [key, true])) } }
}) as unknown as typeof Engines.findOperation
