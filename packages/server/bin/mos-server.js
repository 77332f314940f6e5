#!/usr/bin/env node
// `mos-server`: the service itself, what `npm start` runs (dist/main.js). Settings come from
// SERVICE__* variables and a .env in the working directory.
import { importBuilt } from './import-built.js'

await importBuilt('mos-server', new URL('../dist/main.js', import.meta.url))
