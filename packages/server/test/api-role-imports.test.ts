import { execFile } from 'node:child_process'
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { API_ROLE_ADAPTERS, API_ROLE_ENTRIES, NODE_ONLY_PACKAGES, REPO_DIR, SERVER_DIR, WORKSPACE_SOURCES } from './support/api-role.ts'
import { walkImportGraph } from './support/import-graph.ts'

const abs = (path: string) => resolve(SERVER_DIR, path)
const rules = {
  adapters: new Set(Object.keys(API_ROLE_ADAPTERS).map(abs)),
  nodeOnlyPackages: NODE_ONLY_PACKAGES,
  workspaceSources: WORKSPACE_SOURCES,
}

/** The files biome.jsonc exempts from `noNodejsModules` (its second override), relative to the server package. */
async function biomeExemptions(): Promise<{ on: string[]; off: string[] }> {
  const parsed = ts.parseConfigFileTextToJson('biome.jsonc', await readFile(join(REPO_DIR, 'biome.jsonc'), 'utf8'))
  if (parsed.error) throw new Error(String(parsed.error.messageText))
  const overrides = (parsed.config.overrides ?? []) as {
    includes: string[]
    linter?: { rules?: { correctness?: { noNodejsModules?: string } } }
  }[]
  const level = (o: (typeof overrides)[number]) => o.linter?.rules?.correctness?.noNodejsModules
  const strip = (path: string) => path.replace(/^packages\/server\//, '')
  return {
    on: overrides.filter((o) => level(o) === 'error').flatMap((o) => o.includes.map(strip)),
    off: overrides.filter((o) => level(o) === 'off').flatMap((o) => o.includes.map(strip)),
  }
}

describe("the API role's path has no node: import (docs/architecture.md)", () => {
  it('walks the real import graph from the app factory, the context and the Worker entry: no Node builtin or Node-only package outside the adapters', () => {
    const report = walkImportGraph(API_ROLE_ENTRIES.map(abs), rules, SERVER_DIR)
    expect(report.violations).toEqual([])
    // The walk really went through the app: routes, uploads, stores, the SDK's contract.
    expect(report.reached).toEqual(
      expect.arrayContaining([
        'src/routes/submit.ts',
        'src/uploads/read-upload.ts',
        'src/storage/s3-client.ts',
        'src/web-crypto.ts',
        'src/edge/unread-body.ts',
      ]),
    )
    expect(report.reached.some((path) => path.includes('sdk/src/contract/'))).toBe(true)
    // Every adapter listed is still on the path (a stale entry would hide a module from the rule).
    expect(report.adaptersMet.sort()).toEqual(Object.keys(API_ROLE_ADAPTERS).sort())
  })

  it('catches a deliberately bad import: a Node builtin and a Node-only package, not an adapter or a type-only import', () => {
    const fixtures = resolve(SERVER_DIR, 'test/fixtures/api-role-walk')
    const report = walkImportGraph(
      [join(fixtures, 'entry.ts')],
      { adapters: new Set([join(fixtures, 'adapter.ts')]), nodeOnlyPackages: NODE_ONLY_PACKAGES },
      fixtures,
    )
    expect(report.violations).toEqual([
      { module: 'bad.ts', specifier: 'node:fs/promises', why: 'node builtin', via: ['entry.ts', 'bad.ts'] },
      { module: 'node-only-package.ts', specifier: 'ioredis', why: 'node-only package', via: ['entry.ts', 'node-only-package.ts'] },
    ])
    expect(report.adaptersMet).toEqual(['adapter.ts'])
    expect(report.reached).toContain('type-only.ts')
  })

  it("biome.jsonc turns noNodejsModules on for the server's sources and off for exactly the adapters and the Node entry's own modules", async () => {
    const { on, off } = await biomeExemptions()
    expect(on).toEqual(['src/**'])
    expect(off).toEqual(expect.arrayContaining(Object.keys(API_ROLE_ADAPTERS)))
    // The rest of the exemptions are modules the API role reaches only through an adapter (the licence's
    // machine id, webhook signing) or never (main.ts, the listener, the CLI).
    const reached = new Set(walkImportGraph(API_ROLE_ENTRIES.map(abs), rules, SERVER_DIR).reached)
    const entryOnly = off.filter((path) => !(path in API_ROLE_ADAPTERS))
    expect(entryOnly.filter((path) => reached.has(path))).toEqual([])
  })

  it("biome's rule fires on a node: import in a module of the path, and not in an adapter", { timeout: 60_000 }, async () => {
    // A copy of the configuration over a tree shaped like the repository's (no git: the copy has none).
    const dir = await mkdtemp(join(tmpdir(), 'mos-biome-'))
    try {
      const config = (await readFile(join(REPO_DIR, 'biome.jsonc'), 'utf8')).replace(
        '"enabled": true, "clientKind": "git"',
        '"enabled": false, "clientKind": "git"',
      )
      await writeFile(join(dir, 'biome.jsonc'), config)
      await mkdir(join(dir, 'packages/server/src/routes'), { recursive: true })
      const source = "import { readFile } from 'node:fs/promises'\n\nexport const read = readFile\n"
      await writeFile(join(dir, 'packages/server/src/routes/new-route.ts'), source)
      await writeFile(join(dir, 'packages/server/src/routes/probes.ts'), source)
      await cp(join(SERVER_DIR, 'src/web-crypto.ts'), join(dir, 'packages/server/src/web-crypto.ts'))
      const biome = join(REPO_DIR, 'node_modules/.bin/biome')
      const run = await promisify(execFile)(biome, ['lint', '--colors=off', '--reporter=json', '.'], { cwd: dir }).catch(
        (error: { stdout: string }) => error,
      )
      const report = JSON.parse(run.stdout) as { diagnostics: { category: string; location: { path: string } }[] }
      const flagged = report.diagnostics.filter((d) => d.category === 'lint/correctness/noNodejsModules').map((d) => d.location.path)
      expect(flagged).toEqual(['packages/server/src/routes/new-route.ts'])
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
