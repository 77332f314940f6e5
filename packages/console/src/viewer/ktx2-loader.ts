import { type CompressedTexture, FileLoader } from 'three'
import { KTX2Loader } from 'three/examples/jsm/loaders/KTX2Loader.js'
import transcoderWasm from 'three/examples/jsm/libs/basis/basis_transcoder.wasm?url'
import { TRANSCODER_WORKER_FILE } from './transcoder-worker-file.ts'

/** Where the page finds the transcoder worker: beside index.html, under the build's base (/console/). */
const WORKER_URL = `${import.meta.env.BASE_URL}${TRANSCODER_WORKER_FILE}`

/**
 * three's KTX2Loader, its transcoder started from this origin's worker file instead of a blob: a
 * blob worker runs under the page's policy, which refuses the transcoder's `new Function`; the file
 * carries a policy of its own (build/transcoder-worker.ts says why and what it holds). The messages
 * are three's own. A worker that cannot start (its file missing or refused, an exception) answers
 * every texture with its error, as the worker itself does when its transcoder fails: a KTX2 texture
 * never waits for ever.
 */
export class SameOriginKTX2Loader extends KTX2Loader {
  /**
   * Why textures failed. GLTFLoader draws a texture that failed as none (and logs it), so a model
   * would show untextured with no word on the page; loadModel reads these and says so.
   */
  readonly failures: string[] = []

  // GLTFLoader hands a GLB's textures to parse (load ends there too): a failure is recorded on its way out.
  override parse(buffer: ArrayBuffer, onLoad?: (texture: CompressedTexture) => void, onError?: (error: unknown) => void): void {
    super.parse(buffer, onLoad, (error) => {
      this.failures.push(error instanceof Error ? error.message : String(error))
      onError?.(error)
    })
  }

  override init(): Promise<void> {
    this.transcoderPending ??= new FileLoader(this.manager)
      .setResponseType('arraybuffer')
      .loadAsync(transcoderWasm)
      .then((binary) => {
        this.transcoderBinary = binary as ArrayBuffer
        this.workerPool.setWorkerCreator(() => this.startWorker())
      })
    return this.transcoderPending
  }

  private startWorker(): Worker {
    const worker = new Worker(WORKER_URL)
    let unanswered = 0
    let failure: string | undefined
    // three's pool resolves a worker's oldest question with its next message, whatever it says.
    const answerWithFailure = () => worker.dispatchEvent(new MessageEvent('message', { data: { type: 'error', error: failure, data: {} } }))
    worker.addEventListener('message', () => {
      unanswered = Math.max(0, unanswered - 1)
    })
    worker.addEventListener('error', (event) => {
      event.preventDefault()
      failure ??= `the KTX2 transcoder worker did not start: ${event.message || `${WORKER_URL} could not be loaded`}`
      for (let left = unanswered; left > 0; left--) answerWithFailure()
    })
    const post = worker.postMessage.bind(worker) as (message: unknown, transfer: Transferable[]) => void
    worker.postMessage = ((message: { type?: string }, transfer: Transferable[] = []) => {
      if (message.type !== 'transcode') return post(message, transfer)
      if (failure) return queueMicrotask(answerWithFailure)
      unanswered += 1
      post(message, transfer)
    }) as Worker['postMessage']
    const binary = this.transcoderBinary!.slice(0)
    post({ type: 'init', config: this.workerConfig, transcoderBinary: binary }, [binary])
    return worker
  }
}
