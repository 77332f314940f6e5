#!/usr/bin/env node
// `mos-console-password`: prints the scrypt hash of a console password (read from stdin, never
// argv) for SERVICE__CONSOLE__ADMIN_PASSWORD_HASH. Runs the built CLI (dist/): plain Node, no loader.
import { existsSync } from 'node:fs'

const cli = new URL('../dist/cli/console-password.js', import.meta.url)
if (!existsSync(cli)) {
  console.error('mos-console-password: @mos/server is not built yet; run `npm run build` at the repository root')
  process.exit(1)
}
const { mainConsolePasswordCli } = await import(cli.href)
await mainConsolePasswordCli(process.argv.slice(2))
