#!/usr/bin/env node
// `mos-license …` = `mos license …`: issues and inspects licence keys.
import { importBuilt } from './import-built.js'

const { mainLicenseCli } = await importBuilt('mos-license', new URL('../dist/cli/license.js', import.meta.url))
mainLicenseCli(process.argv.slice(2))
