import { execFile } from 'node:child_process'
import { cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { builtinModules } from 'node:module'
import { mkdtemp, rm } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// The SDK as an app developer gets it: `npm pack` of the built package (publishConfig applied, as
// its prepack does) unpacked into a project outside the monorepo, where only what the tarball
// holds and its declared dependencies can be found. Offline: the dependencies are linked from the
// workspace's node_modules, not installed. dist/ is the workspace build (see build.test.ts).

const run = promisify(execFile)
const pkgDir = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const repoRoot = resolve(pkgDir, '../..')
const TSC = join(repoRoot, 'node_modules/typescript/bin/tsc')

let work: string
let app: string
let installed: string
let packed: { filename: string; files: { path: string }[] }
let manifest: { dependencies: Record<string, string>; exports: unknown; bin: Record<string, string>; types: string; main: string }

/** Packs a copy of the package (so the workspace's package.json is never swapped) and unpacks it into a fresh project. */
async function packIntoFreshProject() {
  const copy = join(work, 'sdk')
  for (const entry of ['package.json', 'README.md', 'dist', 'scripts']) cpSync(join(pkgDir, entry), join(copy, entry), { recursive: true })
  await run(process.execPath, [join(copy, 'scripts/publish-manifest.mjs'), 'apply'])
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: copy })
  packed = JSON.parse(stdout)[0]
  installed = join(app, 'node_modules/@mos/sdk')
  mkdirSync(installed, { recursive: true })
  await run('tar', ['xzf', join(work, packed.filename), '-C', installed, '--strip-components=1'])
  manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'))
  // Only the declared dependencies (and what a TypeScript user has anyway) are reachable.
  for (const name of [...Object.keys(manifest.dependencies), '@types/node']) {
    mkdirSync(dirname(join(app, 'node_modules', name)), { recursive: true })
    symlinkSync(join(repoRoot, 'node_modules', name), join(app, 'node_modules', name))
  }
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'mos-sdk-pack-'))
  app = join(work, 'app')
  mkdirSync(app)
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }))
  await packIntoFreshProject()
}, 60_000)
afterAll(async () => {
  await rm(work, { recursive: true, force: true })
})

/** Every `./…` path a manifest field points at (exports' leaves, bin, main, types). */
function targetsOf(value: unknown): string[] {
  if (typeof value === 'string') return value.startsWith('./') ? [value.slice(2)] : []
  if (value && typeof value === 'object') return Object.values(value).flatMap(targetsOf)
  return []
}

describe('the packed @mos/sdk', () => {
  it('holds every file its exports, types and bin name, built JavaScript only (no source condition, no src/)', () => {
    const files = packed.files.map((file) => file.path)
    const targets = targetsOf([manifest.exports, manifest.bin, manifest.main, manifest.types]).filter((path) => path !== 'package.json')
    expect(targets.length).toBeGreaterThanOrEqual(14)
    expect(targets.filter((target) => !files.includes(target))).toEqual([])
    expect(files.filter((file) => !file.startsWith('dist/') && file !== 'package.json' && file !== 'README.md')).toEqual([])
    expect(JSON.stringify(manifest.exports)).not.toContain('source')
    expect(readFileSync(join(installed, manifest.bin.mos!), 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true)
  })

  it('imports, at run time and in its types, only Node built-ins, its own files and its dependencies', () => {
    const bare = new Set<string>()
    for (const file of readdirSync(join(installed, 'dist'))) {
      const text = readFileSync(join(installed, 'dist', file), 'utf8')
      for (const [, spec] of text.matchAll(/(?:from|import|require)\s*\(?\s*["']([^"']+)["']/g)) {
        if (!spec!.startsWith('.') && !spec!.startsWith('node:') && !builtinModules.includes(spec!)) bare.add(spec!)
      }
    }
    const packageOf = (spec: string) =>
      spec
        .split('/')
        .slice(0, spec.startsWith('@') ? 2 : 1)
        .join('/')
    expect([...bare].filter((spec) => !(packageOf(spec) in manifest.dependencies))).toEqual([])
    expect(Object.keys(manifest.dependencies).sort()).toEqual(['ofetch', 'zod'])
  })

  describe('in a fresh project', () => {
    let server: Server
    let base: string
    beforeAll(async () => {
      server = createServer((request, response) => {
        response.setHeader('content-type', 'application/json')
        if (request.url === '/api/v1/health') response.end('{"status":"ok"}')
        else {
          response.statusCode = 404
          response.end(JSON.stringify({ error: `task not found: ${request.url?.split('/').at(-1)}` }))
        }
      })
      await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    })
    afterAll(() => new Promise<void>((done) => server.close(() => done())))

    const USE = `
      const variant = await sdk.detectVariant(process.argv[2])
      const mos = node.createClient({ baseURL: process.argv[2], apiKey: 'k', variant, maxRetries: 0 })
      const error = await mos.getTask('t9').catch((caught) => caught)
      console.log(JSON.stringify({ variant, health: await mos.health(), notFound: error instanceof sdk.NotFoundError, message: error.message,
        engines: contract.ENGINES, fileFromPath: typeof node.fileFromPath }))`
    const EXPECTED = {
      variant: 'A',
      health: { status: 'ok' },
      notFound: true,
      message: 'task not found: t9',
      engines: ['draco', 'meshopt'],
      fileFromPath: 'function',
    }

    it('ESM: import of @mos/sdk, @mos/sdk/node and @mos/sdk/contract', async () => {
      writeFileSync(
        join(app, 'esm.mjs'),
        `import * as sdk from '@mos/sdk'\nimport * as node from '@mos/sdk/node'\nimport * as contract from '@mos/sdk/contract'\n${USE}`,
      )
      const { stdout } = await run(process.execPath, [join(app, 'esm.mjs'), base], { cwd: app })
      expect(JSON.parse(stdout)).toEqual(EXPECTED)
    })

    it('CommonJS: require of the same three entries', async () => {
      writeFileSync(
        join(app, 'cjs.cjs'),
        `const sdk = require('@mos/sdk'), node = require('@mos/sdk/node'), contract = require('@mos/sdk/contract')\n;(async () => {${USE}\n})()`,
      )
      const { stdout } = await run(process.execPath, [join(app, 'cjs.cjs'), base], { cwd: app })
      expect(JSON.parse(stdout)).toEqual(EXPECTED)
    })

    it('the mos bin runs', async () => {
      const { stdout } = await run(process.execPath, [join(installed, manifest.bin.mos!), '--help'], { cwd: app })
      expect(stdout).toContain('Usage: mos <command> FILE... [options]')
    })

    // docs/sdk.md's quick start, as written, and the variant typing it promises, in each module resolution.
    const quickStart = /## Quick start\n\n```ts\n(.*?)```/s.exec(readFileSync(join(repoRoot, 'docs/sdk.md'), 'utf8'))![1]!
    const VARIANTS = `import { createClient, type TaskRecord } from '@mos/sdk'
import { taskRecordSchema } from '@mos/sdk/contract'
const b = createClient({ baseURL: 'http://localhost:8080', variant: 'B' })
const uptime: number = (await b.health()).uptime_seconds
const a = createClient({ baseURL: 'http://localhost:8080', variant: 'A' })
// @ts-expect-error variant A's health is { status: 'ok' }
;(await a.health()).uptime_seconds
const record: TaskRecord = taskRecordSchema.parse(await a.getTask('t1'))
console.log(uptime, record)
`
    const CJS = `import mos = require('@mos/sdk/node')
const client = mos.createClient({ baseURL: 'http://localhost:8080', variant: 'A' })
export const pending: Promise<{ path: string; bytes: number }> = client.downloadToFile('t1', 'out.glb')
`

    it.each([
      ['node16', 'node16', { 'quick-start.mts': quickStart, 'variants.mts': VARIANTS, 'require.cts': CJS }],
      ['bundler', 'esnext', { 'quick-start.ts': quickStart, 'variants.ts': VARIANTS }],
    ])(
      'TypeScript, moduleResolution %s: the quick start and the variant types check',
      async (resolution, module, files) => {
        const dir = join(app, `ts-${resolution}`)
        mkdirSync(dir)
        for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
        // skipLibCheck (a user's usual setting) halves the time; declarations that failed to resolve would
        // still show, as the @ts-expect-error of variant A's health would go unused.
        const compilerOptions = {
          module,
          moduleResolution: resolution,
          target: 'es2022',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ['node'],
        }
        writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: Object.keys(files) }))
        const result = await run(process.execPath, [TSC, '-p', dir], { cwd: app }).catch((error: { stdout: string }) => error)
        expect(result.stdout).toBe('')
      },
      60_000,
    )
  })
})
