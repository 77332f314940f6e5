#!/usr/bin/env node
// Monorepo launcher of the `mos` CLI: runs the TypeScript source through tsx. The published
// package's `bin` points at the built dist/cli.js instead (see publishConfig).
import { register } from 'tsx/esm/api'

register()
await import('../src/cli/bin.ts')
