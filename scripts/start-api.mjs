// `npm run start:api:deno` / `npm run start:api:bun`: the API role of `npm start`'s build on Deno or
// Bun, with the same SERVICE__* settings (and .env) as `npm start`. Signals are passed on, so a
// SIGTERM drains as under Node, and the runtime's exit code is this script's.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { runtimeArgs, runtimeBinary } from './runtime-binary.mjs'

const runtime = process.argv[2]
if (runtime !== 'deno' && runtime !== 'bun') {
  console.error('usage: node scripts/start-api.mjs deno|bun')
  process.exit(2)
}
const binary = runtimeBinary(runtime)
if (!binary) {
  console.error(
    `[mos] no ${runtime} binary: \`npm install\` installs it for ${runtime === 'bun' ? 'Linux x64' : 'Linux, macOS and Windows on x64 and arm64'} (an optional dependency); elsewhere put \`${runtime}\` on PATH`,
  )
  process.exit(1)
}
const entry = fileURLToPath(new URL('../packages/server/dist/main.js', import.meta.url))
const child = spawn(binary, runtimeArgs(runtime, entry), { stdio: 'inherit' })
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => child.kill(signal))
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)))
