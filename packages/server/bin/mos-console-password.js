#!/usr/bin/env node
// `mos-console-password`: prints the scrypt hash of a console password (read from stdin, never
// argv) for SERVICE__CONSOLE__ADMIN_PASSWORD_HASH.
import { importBuilt } from './import-built.js'

const { mainConsolePasswordCli } = await importBuilt('mos-console-password', new URL('../dist/cli/console-password.js', import.meta.url))
await mainConsolePasswordCli(process.argv.slice(2))
