#!/usr/bin/env node
// Monorepo launcher of the `mos` CLI: runs the built dist/cli.js (`npm install` builds it, or
// `npm run build`). The published package's `bin` points at dist/cli.js itself (see publishConfig).
import { existsSync } from 'node:fs'

const cli = new URL('../dist/cli.js', import.meta.url)
if (!existsSync(cli)) {
  console.error('mos: @mos/sdk is not built yet; run `npm run build` at the repository root')
  process.exit(1)
}
await import(cli.href)
