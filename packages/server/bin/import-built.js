// Shared by the server's bins: they run the built JavaScript (dist/, made by `npm install` or
// `npm run build`) with plain Node, no loader, and say so plainly when it is not built yet.
import { existsSync } from 'node:fs'

/** Imports the built module at `url`, or stops with exit code 1 naming the command `bin`. */
export async function importBuilt(bin, url) {
  if (!existsSync(url)) {
    console.error(`${bin}: @mos/server is not built yet; run \`npm run build\` at the repository root`)
    process.exit(1)
  }
  return import(url.href)
}
