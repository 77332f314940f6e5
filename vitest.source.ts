/**
 * Tests run the workspace packages from their TypeScript sources: the `source` export condition
 * (see each package.json's exports) before Vitest's own server defaults, which setting the list
 * replaces (Vite's minus `module`, whose extensionless ESM builds Node cannot load once
 * externalized). Vitest also hands these to its workers as `--conditions`, so engine threads
 * started by a test resolve the same way. Node, tsx and child processes without it get dist/.
 */
export const SOURCE_RESOLVE = { conditions: ['source', 'node', 'development|production'] }
