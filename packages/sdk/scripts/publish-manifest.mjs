// npm publishes package.json as it is (unlike pnpm, it ignores `publishConfig.exports`/`bin`), so
// `prepack` swaps the source-pointing fields for the dist ones and `postpack` puts them back.
// In the monorepo, exports carry a `source` condition (src/*.ts, for tests and dev) besides dist/.
import { copyFileSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'

const manifest = new URL('../package.json', import.meta.url)
const backup = new URL('../package.json.source', import.meta.url)
const PUBLISHED_FIELDS = ['main', 'module', 'types', 'exports', 'bin']

const mode = process.argv[2]
if (mode === 'apply') {
  if (!existsSync(backup)) copyFileSync(manifest, backup)
  const pkg = JSON.parse(readFileSync(backup, 'utf8'))
  for (const field of PUBLISHED_FIELDS) if (pkg.publishConfig?.[field] !== undefined) pkg[field] = pkg.publishConfig[field]
  for (const field of PUBLISHED_FIELDS) delete pkg.publishConfig[field]
  writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`)
} else if (mode === 'restore') {
  if (existsSync(backup)) renameSync(backup, manifest)
} else {
  console.error('usage: publish-manifest.mjs apply|restore')
  process.exitCode = 2
}
