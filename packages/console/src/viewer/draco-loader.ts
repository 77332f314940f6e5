import type { BufferGeometry } from 'three'
import { DRACOLoader } from 'three/examples/jsm/loaders/DRACOLoader.js'

/** What DRACOLoader keeps on each of its workers (three's own fields, untyped in its declarations). */
interface DecoderWorker extends Worker {
  _callbacks: Record<number, { resolve: (value: unknown) => void; reject: (reason: unknown) => void }>
  _failsTasks?: boolean
}

/** The parts of DRACOLoader this file builds on, which its declarations leave out. */
interface DracoInternals {
  _getWorker(taskID: number, taskCost: number): Promise<DecoderWorker>
  _initDecoder(): Promise<void>
  decodeGeometry(buffer: ArrayBuffer, taskConfig: unknown): Promise<BufferGeometry>
  decoderPending: Promise<void> | null
  workerPool: DecoderWorker[]
  workerSourceURL: string
}

/**
 * Put before three's worker code. Its decoder module starts in a promise (emscripten), so a module that
 * fails to start (its wasm cut short or refused) or a call into one that aborted rejects unhandled: the
 * worker posts nothing and raises no error, and its tasks waited for ever. Reported, it becomes the
 * worker's `error` event, which fails its tasks (`failingTasksOnError`).
 */
const REPORT_UNHANDLED = `self.addEventListener('unhandledrejection', (event) => { event.preventDefault(); reportError(event.reason) })\n`

/** A failure of the decoder itself (not of the model's bytes): said as such, not as undecodable geometry. */
class DecoderFailure extends Error {}

/** The words of a decoder failure: three's worker rejects with its message (`{ type: 'error', error }`), not an Error. */
function reasonOf(failure: unknown): string {
  if (failure instanceof Error) return failure.message
  const words = (failure as { error?: unknown } | undefined)?.error
  return typeof words === 'string' && words ? words.replace(/^THREE\.DRACOLoader: /, '') : 'the decoder gave no reason'
}

/** Why the decoder's files could not be fetched, without their URL: three's HttpError carries the answer. */
function fetchFailure(failure: unknown): string {
  const response = (failure as { response?: Response } | undefined)?.response
  if (response) return `the service answered ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`
  return 'the service could not be reached'
}

/** An error event's message without the browser's "Uncaught" and emscripten's hint for its own developers. */
const workerWords = (message: string) =>
  message.replace(/^Uncaught (\w*Error: )?/, '').replace(/\s*Build with -sASSERTIONS for more info\.?$/, '')

/**
 * three's DRACOLoader with an error path. A buffer its worker cannot decode fails the model with the
 * decoder's words (three rejects with the worker's message object, so the view said `undefined`). A
 * worker that dies (its script or wasm refused, its module failing to start, an uncaught error inside)
 * fails every task it held, where three left them pending and the view loading for ever. And the
 * decoder is loaded again by the next model after a failure: three keeps its first attempt for the
 * loader's life, so one answer lost while the service restarted (or a wasm cut short) failed, or hung,
 * every Draco model the page opened after it, the loader being shared by all views.
 */
export class DracoLoaderWithErrors extends DRACOLoader {
  constructor() {
    super()
    const internals = this as unknown as DracoInternals
    const initDecoder = internals._initDecoder.bind(this)
    internals._initDecoder = () => {
      if (internals.decoderPending) return internals.decoderPending
      const pending = initDecoder().then(
        () => reportingUnhandled(internals),
        (failure: unknown) => {
          internals.decoderPending = null
          throw new DecoderFailure(`the Draco decoder could not be loaded: ${fetchFailure(failure)}`)
        },
      )
      internals.decoderPending = pending
      return pending
    }
    const getWorker = internals._getWorker.bind(this)
    internals._getWorker = async (taskID, taskCost) => failingTasksOnError(internals, await getWorker(taskID, taskCost))
    const decode = internals.decodeGeometry.bind(this)
    internals.decodeGeometry = (buffer, taskConfig) =>
      decode(buffer, taskConfig).catch((failure: unknown) => {
        if (failure instanceof DecoderFailure) throw failure
        throw new Error(`its Draco geometry could not be decoded: ${reasonOf(failure)}`)
      })
  }
}

/** Replaces the worker source three built (a blob) with the same code after `REPORT_UNHANDLED`. */
async function reportingUnhandled(loader: DracoInternals): Promise<void> {
  const built = loader.workerSourceURL
  const source = await (await fetch(built)).text()
  loader.workerSourceURL = URL.createObjectURL(new Blob([REPORT_UNHANDLED, source], { type: 'text/javascript' }))
  URL.revokeObjectURL(built)
}

/**
 * Makes a worker's death fail the tasks it holds, and takes it out of the pool so no later task waits
 * on it. The decoder it was started with goes too (the next model fetches it again): a worker that
 * died starting may have been given a wasm cut short, which every worker started after it would get.
 */
function failingTasksOnError(loader: DracoInternals, worker: DecoderWorker): DecoderWorker {
  if (worker._failsTasks) return worker
  worker._failsTasks = true
  worker.addEventListener('error', (event) => {
    // Said on the view in words: not also an uncaught error of the page.
    event.preventDefault()
    const why = `the Draco decoder's worker failed: ${workerWords(event.message) || 'it could not start'}`
    for (const callback of Object.values(worker._callbacks)) callback.reject(new DecoderFailure(why))
    worker._callbacks = {}
    loader.workerPool = loader.workerPool.filter((pooled) => pooled !== worker)
    worker.terminate()
    loader.decoderPending = null
  })
  return worker
}
