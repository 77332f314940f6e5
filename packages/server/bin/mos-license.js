#!/usr/bin/env node
// `mos-license …` = `mos license …`: issues and inspects licence keys. Runs the TypeScript source
// through tsx, like the rest of the service (no build step).
import { register } from 'tsx/esm/api'

register()
const { mainLicenseCli } = await import('../src/cli/license.ts')
mainLicenseCli(process.argv.slice(2))
