#!/usr/bin/env node
// `mos-server`: the service itself, what `npm start` runs (dist/main.js, made by `npm install` or
// `npm run build`). Settings come from SERVICE__* variables and a .env in the working directory.
import { existsSync } from 'node:fs'

const main = new URL('../dist/main.js', import.meta.url)
if (!existsSync(main)) {
  console.error('mos-server: @mos/server is not built yet; run `npm run build` at the repository root')
  process.exit(1)
}
await import(main.href)
