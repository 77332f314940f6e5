// Test-only `--import`: appends every module the process loads to the file named by
// MOS_TEST_MODULE_LOG, one URL or path a line, from the main thread and from every worker thread
// (Node runs `--import` again in each thread, which Piscina starts with the parent's execArgv).
// ESM goes through a resolve hook; CommonJS `require` through the loader's filename resolution,
// which module hooks do not see on Node 20. Plain JavaScript: it must not need a loader itself.
import { appendFileSync } from 'node:fs'
import { createRequire, register } from 'node:module'
import { threadId } from 'node:worker_threads'

const log = process.env.MOS_TEST_MODULE_LOG
if (log) {
  const hooks = `import { appendFileSync } from 'node:fs'
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context)
  appendFileSync(${JSON.stringify(log)}, 'esm ' + resolved.url + '\\n')
  return resolved
}`
  register(`data:text/javascript,${encodeURIComponent(hooks)}`)

  const Module = createRequire(import.meta.url)('node:module')
  const resolveFilename = Module._resolveFilename
  Module._resolveFilename = function (...args) {
    const filename = resolveFilename.apply(this, args)
    appendFileSync(log, `cjs ${filename}\n`)
    return filename
  }
  appendFileSync(log, `thread ${threadId}\n`)
}
