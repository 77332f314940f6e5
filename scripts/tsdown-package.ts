import { defineConfig, type UserConfig } from 'tsdown'

/**
 * The build of a workspace package that runs inside the monorepo (engines, server, conformance):
 * every source module compiled to one ESM file under dist/, in the same folders as under src/.
 * Unbundled on purpose: paths taken from `import.meta.url` (the server's `../package.json`, the
 * engine pool's worker file) stay valid, and a stack trace names the file it came from.
 * Dependencies are never bundled: production runs them from node_modules as installed.
 */
export function packageBuild(overrides: UserConfig = {}): UserConfig {
  return defineConfig({
    entry: ['src/**/*.ts', '!src/**/*.d.ts'],
    unbundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Inside the monorepo TypeScript reads sources (the `source` condition); nothing consumes d.ts.
    dts: false,
    clean: true,
    // The packages are `type: module`: .js is ESM, as the exports and the engine pool expect.
    fixedExtension: false,
    sourcemap: true,
    deps: { skipNodeModulesBundle: true },
    ...overrides,
  })
}
