// Starts threads that load a thread entry as piscina does (require(), falling back to import()) and
// ends each at a different moment of that require(): the step Node runs synchronously, where an
// ES module entry used to abort the whole process when its thread was ended (thread-entry.cjs).
// A separate process, so that an abort is seen as this process's exit, not the test runner's.
// argv: entry file, worker module URL, rounds, threads per round.
const { Worker } = require('node:worker_threads')
const { performance } = require('node:perf_hooks')

const [entry, workerModule, roundsArg, threadsArg] = process.argv.slice(2)
const rounds = Number(roundsArg)
const threads = Number(threadsArg)
const loadLikePiscina = `
  const { parentPort } = require('node:worker_threads')
  try { require(${JSON.stringify(entry)}) } catch { import(require('node:url').pathToFileURL(${JSON.stringify(entry)}).href).catch(() => {}) }
  parentPort.postMessage('required')
`

/** A round's threads, started together. */
function start() {
  return Array.from({ length: threads }, () => {
    const worker = new Worker(loadLikePiscina, { eval: true, workerData: { workerModule } })
    worker.on('error', () => undefined)
    return worker
  })
}

/** How long, from a round's start, its threads' require() of the entry takes to return or throw. */
async function requireTime() {
  const times = []
  for (let i = 0; i < 3; i++) {
    const started = performance.now()
    const workers = start()
    await Promise.all(workers.map((worker) => new Promise((resolve) => worker.once('message', resolve))))
    times.push(performance.now() - started)
    await Promise.all(workers.map((worker) => worker.terminate()))
  }
  return times.sort((a, b) => a - b)[1]
}

async function main() {
  const required = await requireTime()
  for (let i = 0; i < rounds; i++) {
    // From half the require() time to just past it, where the module graph is instantiated.
    const at = required * (0.5 + (0.6 * i) / rounds)
    const started = performance.now()
    const workers = start()
    while (performance.now() - started < at) {}
    if (process.env.TRACE) process.stdout.write(`${(at / required).toFixed(3)} `)
    await Promise.all(workers.map((worker) => worker.terminate()))
  }
  console.log(`ended ${rounds * threads} threads during their first ${required.toFixed(1)} ms`)
}

main()
