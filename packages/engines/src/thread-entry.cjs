// Piscina's thread entry, CommonJS on purpose. Piscina loads its entry with require(); since Node
// 20.19 a require() of an ES module instantiates it synchronously, and a thread terminated in that
// step (piscina ends threads when a pool is destroyed, recycled or a job is cancelled, at any moment
// of their start) aborts the whole process with V8's "IsGraphAsync must be used on an instantiated
// module". Requiring this file never takes that path: the ES worker is loaded with import(), which a
// terminated thread simply abandons.
//
// The worker module is the pool's choice (workerData.workerModule): compiled, dist/worker.js, plain
// JavaScript; from source (tests, `npm run dev`), src/worker.ts through tsx's scoped import, since
// Node 20 carries no loader hooks into worker threads.
const { pathToFileURL } = require('node:url')
const { workerData } = require('node:worker_threads')

const workerModule = workerData.workerModule
// tsx's API is imported as an ES module too: its CommonJS build resolves its own loader wrongly.
const loading = workerModule.endsWith('.ts')
  ? import('tsx/esm/api').then(({ tsImport }) => tsImport(workerModule, pathToFileURL(__filename).href))
  : import(workerModule)

/**
 * The thread's one job, dispatched from the registry (operations/index.ts): exported as a promise of
 * the function, which piscina awaits when it preloads the thread. So a thread is ready once its worker
 * is loaded, not before: a ready thread idles in Atomics.wait, where no import could go on. A worker
 * that cannot load (a broken install, no descriptors left) must not reject here: piscina would emit
 * the error on the pool, which ends the process, and start no thread again, which leaves jobs waiting.
 */
exports.runEngineJob = loading.then(
  (worker) => worker.runEngineJob,
  (error) => (job) => retireUnloaded(job, error),
)

/**
 * Answers a job on a thread whose worker could not load, then ends the thread, as a retiring thread
 * does (worker.ts's retire: the result on the job's port, the pool's acknowledgement, the exit).
 * Piscina starts a fresh thread, which tries the load again.
 */
async function retireUnloaded(job, error) {
  const cause = error instanceof Error ? error.message : String(error)
  const final = { ok: false, message: `internal error: the engine could not start: ${cause}` }
  const reason = `its worker could not load: ${cause}`
  const received = new Promise((resolve) => {
    job.port.once('message', resolve)
    job.port.once('close', resolve)
    setTimeout(resolve, 5000).unref()
  })
  job.port.postMessage({ final, retiring: { reason, jobs: 0, memoryMb: 0 } })
  await received
  process.exit(1)
}
