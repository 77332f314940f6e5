// Builds what is missing or stale before `npm start` (prestart) and after `npm install` (prepare),
// so the README's two commands stay two: turbo rebuilds only packages whose sources changed and
// restores the rest from its cache. Plain JavaScript: it runs before anything is compiled.
//
// An install without dev dependencies (`npm ci --omit=dev` on a production host that received
// built dist/ folders) has no turbo or tsdown: there it only checks that the build is present.
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const BUILT = [
  'packages/sdk/dist/index.js',
  'packages/engines/dist/worker.js',
  'packages/console/dist/index.html',
  'packages/server/dist/main.js',
  'packages/conformance/dist/cli.js',
]

let turbo
try {
  turbo = createRequire(import.meta.url).resolve('turbo/bin/turbo')
} catch {
  const missing = BUILT.filter((file) => !existsSync(new URL(`../${file}`, import.meta.url)))
  if (missing.length > 0) {
    console.error(
      `[mos] not built (${missing.join(', ')}) and no build tools here: run \`npm install\` with dev dependencies, then \`npm run build\``,
    )
    process.exit(1)
  }
  process.exit(0)
}

const result = spawnSync(process.execPath, [turbo, 'run', 'build', '--output-logs=errors-only'], { cwd: root, stdio: 'inherit' })
process.exit(result.status ?? 1)
