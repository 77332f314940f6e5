#!/usr/bin/env node
// `mos-license …` = `mos license …`: issues and inspects licence keys. Runs the built CLI (dist/,
// made by `npm install` or `npm run build`): plain Node, no loader.
import { existsSync } from 'node:fs'

const cli = new URL('../dist/cli/license.js', import.meta.url)
if (!existsSync(cli)) {
  console.error('mos-license: @mos/server is not built yet; run `npm run build` at the repository root')
  process.exit(1)
}
const { mainLicenseCli } = await import(cli.href)
mainLicenseCli(process.argv.slice(2))
