#!/usr/bin/env node
// Runs the built CLI (dist/, made by `npm install` or `npm run build`): plain Node, no loader.
import { existsSync } from 'node:fs'

const cli = new URL('../dist/cli.js', import.meta.url)
if (!existsSync(cli)) {
  console.error('mos-conformance: @mos/conformance is not built yet; run `npm run build` at the repository root')
  process.exit(2)
}
const { main } = await import(cli.href)
process.exitCode = await main(process.argv.slice(2))
