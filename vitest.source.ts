import { defineProject } from 'vitest/config'

/**
 * Tests run the workspace packages from their TypeScript sources: the `source` export condition
 * (see each package.json's exports) before Vitest's own server defaults, which setting the list
 * replaces (Vite's minus `module`, whose extensionless ESM builds Node cannot load once
 * externalized). Vitest also hands these to its workers as `--conditions`, so engine threads
 * started by a test resolve the same way. Node, tsx and child processes without it get dist/.
 */
const SOURCE_RESOLVE = { conditions: ['source', 'node', 'development|production'] }

/**
 * One workspace package's test project: its `test/**\/*.test.ts` on the sources, with time-outs long
 * enough for suites that start the real server or run engines on real files.
 */
export function workspaceProject(name: string) {
  return defineProject({
    resolve: SOURCE_RESOLVE,
    ssr: { resolve: SOURCE_RESOLVE },
    test: { name, include: ['test/**/*.test.ts'], testTimeout: 60_000, hookTimeout: 60_000 },
  })
}
