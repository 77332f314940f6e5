import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import type { Plugin } from 'vite'

import { TRANSCODER_WORKER_FILE } from '../src/viewer/transcoder-worker-file.ts'

/**
 * Prepended to three's worker: a transcoder that fails to start (an exception, a rejected promise:
 * embind's `new Function` refused by a policy, a wasm that does not compile) answers every texture
 * asked of it with its error. three's worker waits on the transcoder for ever instead, and the view
 * with it ("Loading the model…" with no end). It watches the messages both ways to know which
 * textures are still unanswered.
 */
const FAILURE_ANSWERS = `/* Mos: a transcoder that failed answers with its error (see packages/console/build/transcoder-worker.ts). */
const mosUnanswered = new Set();
let mosFailure;
const mosPost = self.postMessage.bind(self);
const mosAnswer = (id) => mosPost({ type: 'error', id, error: mosFailure, data: {} });
self.postMessage = (message, transfer) => { mosUnanswered.delete(message && message.id); mosPost(message, transfer); };
self.addEventListener('message', (event) => {
  if (event.data.type !== 'transcode') return;
  if (mosFailure) mosAnswer(event.data.id); else mosUnanswered.add(event.data.id);
});
const mosFail = (reason) => {
  mosFailure ??= 'the KTX2 transcoder failed to start: ' + (reason && reason.message ? reason.message : String(reason));
  for (const id of mosUnanswered) mosAnswer(id);
  mosUnanswered.clear();
};
self.addEventListener('unhandledrejection', (event) => mosFail(event.reason));
self.addEventListener('error', (event) => mosFail(event.error ?? event.message));
`

/**
 * Prepended to three's worker too: a texture whose sides are not multiples of 4 is not transcoded
 * to S3TC (BC1/3) or BPTC (BC7), which WebGL refuses at such sizes ("The implied base level
 * dimensions for an S3TC, RGTC, or BPTC texture are not multiples of 4"): the texture then exists at
 * no level and the model is drawn black. Mos's own texture_ktx2 keeps an image's size (BoxTextured's
 * logo is 211×211), and so may any KTX2 file dropped here. three's worker reads `config` (its
 * top-level binding, set by 'init') when it picks a target, one texture at a time per worker, so the
 * flags are set for each texture before three's listener handles it; the other targets (ETC2, ASTC,
 * uncompressed RGBA) stay open.
 */
const UNALIGNED_TARGETS = `/* Mos: no S3TC or BPTC for sides that are not multiples of 4 (see packages/console/build/transcoder-worker.ts). */
let mosConfig;
self.addEventListener('message', (event) => {
  const message = event.data;
  if (message.type === 'init') mosConfig = message.config;
  if (message.type !== 'transcode' || !mosConfig) return;
  const header = new DataView(message.buffer);
  const aligned = header.byteLength < 28 || (header.getUint32(20, true) % 4 === 0 && header.getUint32(24, true) % 4 === 0);
  config = aligned ? mosConfig : { ...mosConfig, dxtSupported: false, bptcSupported: false };
});
`

/**
 * The KTX2 (Basis) transcoder worker as a file of its own. three's KTX2Loader assembles the same text
 * at run time (its constants, basis_transcoder.js, its worker function) and starts it from a blob:
 * URL, and a blob worker runs under the page's policy, whose script-src has no 'unsafe-eval': the
 * transcoder's embind glue builds functions with `new Function`, was refused, and the view waited
 * for ever. Served from this origin, the worker runs under the policy its own response carries,
 * which allows eval to the worker alone (no DOM, no network, only the page's messages), while the
 * page keeps its strict one. Built from the installed three, so it always matches the loader.
 */
export async function transcoderWorkerSource(): Promise<string> {
  const require = createRequire(import.meta.url)
  const transcoder = await readFile(require.resolve('three/examples/jsm/libs/basis/basis_transcoder.js'), 'utf8')
  const { KTX2Loader } = await import('three/examples/jsm/loaders/KTX2Loader.js')
  const loader = KTX2Loader as unknown as Record<string, unknown> & { BasisWorker: () => void }
  const worker = loader.BasisWorker.toString()
  return [
    FAILURE_ANSWERS,
    UNALIGNED_TARGETS,
    '/* constants */',
    ...['EngineFormat', 'EngineType', 'TranscoderFormat', 'BasisFormat'].map((name) => `let _${name} = ${JSON.stringify(loader[name])}`),
    '/* basis_transcoder.js */',
    transcoder,
    '/* worker */',
    worker.substring(worker.indexOf('{') + 1, worker.lastIndexOf('}')),
  ].join('\n')
}

/** Writes the transcoder worker into the build as `TRANSCODER_WORKER_FILE` (a fixed name: the page and the server know it). */
export function transcoderWorkerPlugin(): Plugin {
  return {
    name: 'mos-transcoder-worker',
    apply: 'build',
    async generateBundle() {
      this.emitFile({ type: 'asset', fileName: TRANSCODER_WORKER_FILE, source: await transcoderWorkerSource() })
    },
  }
}
