/**
 * The KTX2 transcoder worker's file in the build (build/transcoder-worker.ts writes it), served at
 * /console/<name> under a policy of its own (packages/server/src/routes/console-page.ts, which
 * names it too).
 */
export const TRANSCODER_WORKER_FILE = 'basis-transcoder-worker.js'
