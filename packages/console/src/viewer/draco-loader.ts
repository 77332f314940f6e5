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
  decodeGeometry(buffer: ArrayBuffer, taskConfig: unknown): Promise<BufferGeometry>
  workerPool: DecoderWorker[]
}

/** The words of a decoder failure: three's worker rejects with its message (`{ type: 'error', error }`), not an Error. */
function reasonOf(failure: unknown): string {
  if (failure instanceof Error) return failure.message
  const words = (failure as { error?: unknown } | undefined)?.error
  return typeof words === 'string' && words ? words : 'the decoder gave no reason'
}

/**
 * three's DRACOLoader with an error path: a buffer its worker cannot decode fails the model with the
 * decoder's words (three rejects with the worker's message object, so the view said `undefined`),
 * and a worker that dies (its script or wasm refused, an uncaught error inside) fails every task it
 * held, where three, listening to its messages only, left them pending and the view loading for ever.
 */
export class DracoLoaderWithErrors extends DRACOLoader {
  constructor() {
    super()
    const internals = this as unknown as DracoInternals
    const getWorker = internals._getWorker.bind(this)
    internals._getWorker = async (taskID, taskCost) => failingTasksOnError(internals, await getWorker(taskID, taskCost))
    const decode = internals.decodeGeometry.bind(this)
    internals.decodeGeometry = (buffer, taskConfig) =>
      decode(buffer, taskConfig).catch((failure: unknown) => {
        throw new Error(`its Draco geometry could not be decoded: ${reasonOf(failure)}`)
      })
  }
}

/** Makes a worker's death fail the tasks it holds, and takes it out of the pool so no later task waits on it. */
function failingTasksOnError(loader: DracoInternals, worker: DecoderWorker): DecoderWorker {
  if (worker._failsTasks) return worker
  worker._failsTasks = true
  worker.addEventListener('error', (event) => {
    const why = `the Draco decoder's worker failed: ${event.message || 'it could not start'}`
    for (const callback of Object.values(worker._callbacks)) callback.reject(new Error(why))
    worker._callbacks = {}
    loader.workerPool = loader.workerPool.filter((pooled) => pooled !== worker)
    worker.terminate()
  })
  return worker
}
