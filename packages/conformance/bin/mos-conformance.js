#!/usr/bin/env node
// Runs the TypeScript sources through tsx, like the rest of the repository (no build step).
import { tsImport } from 'tsx/esm/api'

const { main } = await tsImport('../src/cli.ts', import.meta.url)
process.exitCode = await main(process.argv.slice(2))
