// `npm run start:api:deno` / `start:api:bun` / `start:api:workerd`: the API role of `npm start`'s build
// on Deno, Bun or workerd, with the same SERVICE__* settings (and .env) as `npm start`. Signals are
// passed on, so a SIGTERM drains as under Node, and the runtime's exit code is this script's.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { runtimeArgs, runtimeBinary } from './runtime-binary.mjs'
import { startWorkerd, withDotEnv } from './workerd.mjs'

const runtime = process.argv[2]
if (runtime !== 'deno' && runtime !== 'bun' && runtime !== 'workerd') {
  console.error('usage: node scripts/start-api.mjs deno|bun|workerd')
  process.exit(2)
}
if (runtime === 'workerd') await startOnWorkerd()
const binary = runtimeBinary(runtime)
if (!binary) {
  console.error(
    `[mos] no ${runtime} binary: \`npm install\` installs it for ${runtime === 'bun' ? 'Linux x64' : 'Linux, macOS and Windows on x64 and arm64'} (an optional dependency); elsewhere put \`${runtime}\` on PATH`,
  )
  process.exit(1)
}
const entry = fileURLToPath(new URL('../packages/server/dist/main.js', import.meta.url))
followChild(spawn(binary, runtimeArgs(runtime, entry), { stdio: 'inherit' }))

/** Passes this script's signals on to the runtime, and exits with its code. */
function followChild(child) {
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => child.kill(signal))
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)))
}

/**
 * workerd runs the Worker bundle (built now, from the sources), not dist/main.js. The line below is
 * the one `npm start` prints once it listens (scripts and tests read the port from it).
 */
async function startOnWorkerd() {
  const env = withDotEnv(process.env)
  let worker
  try {
    worker = await startWorkerd(env)
  } catch (error) {
    console.error(`[mos] cannot start on workerd: ${error.message}`)
    process.exit(1)
  }
  const { child, host, port, compatibilityDate } = worker
  console.log(
    `[mos] variant ${env.SERVICE__SERVER__VARIANT || 'A'} listening on http://${host}:${port} (role: api, runtime: workerd ${compatibilityDate}, pid ${child.pid})`,
  )
  followChild(child)
  await new Promise(() => undefined)
}
