// Bundles the API role as a Worker (workerd, Cloudflare Workers): `packages/server/src/edge/worker.ts`
// and what it reaches, into one ES module, `packages/server/dist-worker/worker.js`. Node builtins
// stay imports, which workerd's `nodejs_compat` provides (ioredis and BullMQ use node:net, node:events,
// node:crypto). Five modules are swapped for Worker counterparts (src/edge/): `@mos/engines` (worker
// threads and native codecs: the registry's facts are read here, on Node, instead), `src/version.ts`
// (reads package.json from disk), `src/lazy-modules.ts` (requires ioredis and BullMQ from node_modules at
// run time: the Worker gets them bundled), `src/routes/console-page.ts` (the console's built page is
// read from disk) and pino (file descriptors and transport threads; the Worker logs
// through `console`, and pino's browser build is what the context's unused default logger imports).
// Plain JavaScript: `npm run start:api:workerd` and the tests run it; `node scripts/build-worker.mjs` alone builds.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const server = `${root}packages/server/`
/** The bundle, beside the server's dist/ (gitignored with it). */
export const WORKER_BUNDLE = `${server}dist-worker/worker.js`

/** The facts the bundle cannot read where it runs (src/edge/build-facts.ts), read from the built engines. */
async function buildFacts() {
  const engines = await import('@mos/engines')
  const operations = Object.fromEntries(
    engines.OPERATIONS.map((operation) => [
      operation.name,
      { formats: engines.operationFormats(operation.name), options: Object.keys(operation.options.shape ?? {}) },
    ]),
  )
  const { version } = JSON.parse(readFileSync(`${server}package.json`, 'utf8'))
  return { version, operations, engines: engines.describeEngines() }
}

/** Modules of the server (by path from its folder) and packages replaced in the bundle, with their Worker counterparts in src/edge/. */
const COUNTERPARTS = {
  '@mos/engines': 'engines-stand-in.ts',
  'src/version.ts': 'version.ts',
  'src/lazy-modules.ts': 'lazy-modules.ts',
  'src/routes/console-page.ts': 'console-page.ts',
}

/** Maps the Node-bound modules to their Worker counterparts. */
const workerCounterparts = {
  name: 'mos-worker-counterparts',
  setup(build) {
    build.onResolve({ filter: /^@mos\/engines$/ }, () => ({ path: `${server}src/edge/${COUNTERPARTS['@mos/engines']}` }))
    build.onResolve({ filter: /^\.\.?\/.*\.ts$/ }, (args) => {
      const target = resolve(dirname(args.importer), args.path).slice(server.length)
      const counterpart = COUNTERPARTS[target]
      return counterpart && !args.importer.startsWith(`${server}src/edge/`) ? { path: `${server}src/edge/${counterpart}` } : undefined
    })
    build.onResolve({ filter: /^pino$/ }, () => ({ path: createRequire(`${server}package.json`).resolve('pino/browser.js') }))
  },
}

/** Builds the bundle; resolves with its path. */
export async function buildWorker() {
  const { build } = await import('esbuild')
  const result = await build({
    entryPoints: [`${server}src/edge/worker.ts`],
    outfile: WORKER_BUNDLE,
    write: false,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'es2023',
    conditions: ['workerd', 'worker'],
    // A Worker module has no URL of its own: the modules that anchor paths on it get the bundle's name.
    define: { MOS_WORKER_BUILD: JSON.stringify(await buildFacts()), 'import.meta.url': JSON.stringify('file:///worker.js') },
    // ioredis and BullMQ are CommonJS and `require` Node builtins: give the module a `require`
    // (workerd's node:module has createRequire; a Worker module has no import.meta.url to anchor it).
    // Its `require` does not find node:process (workerd 2026-07-30), which an import does.
    banner: {
      js: [
        "import { createRequire as __mosCreateRequire } from 'node:module'",
        "import __mosProcess from 'node:process'",
        "const __mosRequire = __mosCreateRequire('/worker.js')",
        "const require = (id) => (id === 'node:process' || id === 'process' ? __mosProcess : __mosRequire(id))",
      ].join(';'),
    },
    plugins: [workerCounterparts],
    logLevel: 'warning',
    legalComments: 'none',
  })
  // Written whole, then renamed: several processes may build at once (the tests start three), and
  // none may start workerd on another's half-written file.
  const [output] = result.outputFiles
  mkdirSync(dirname(WORKER_BUNDLE), { recursive: true })
  const partial = `${WORKER_BUNDLE}.${process.pid}.tmp`
  writeFileSync(partial, output.contents)
  renameSync(partial, WORKER_BUNDLE)
  return WORKER_BUNDLE
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  console.log(`[mos] Worker bundle: ${await buildWorker()}`)
}
