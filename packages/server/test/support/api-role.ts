import { resolve } from 'node:path'

/** The server package's folder. */
export const SERVER_DIR = resolve(import.meta.dirname, '../..')
/** The repository's root. */
export const REPO_DIR = resolve(SERVER_DIR, '../..')

/**
 * Where the API role starts: the app factory and the context it is built over, and the Worker entry
 * (workerd) that serves them. The API role's path is every module these reach at run time, minus the
 * adapters below (docs/architecture.md). In the Worker bundle, five of the adapters' modules are
 * replaced by counterparts in src/edge/ (scripts/build-worker.mjs lists them); the walk checks the
 * sources as Node, Deno and Bun run them.
 */
export const API_ROLE_ENTRIES = ['src/app.ts', 'src/context.ts', 'src/edge/worker.ts']

/**
 * The modules on the API role's path that may touch Node, each with why. Each is made by the
 * context (or the entry) and handed to the app's modules as an interface, never imported by a route;
 * the rest of the path uses web globals only. biome.jsonc turns `noNodejsModules` off for exactly
 * these files (and the entry modules off the path); `api-role-imports.test.ts` checks both lists.
 */
export const API_ROLE_ADAPTERS: Readonly<Record<string, string>> = {
  'src/storage/fs-file-store.ts': 'the fs file store (node:fs); the app sees it as a FileStore of web streams',
  'src/storage/fs-atomic-driver.ts': 'the fs records driver (node:fs)',
  'src/lazy-modules.ts': 'loads ioredis (the Redis connection factory) and BullMQ on first use, with createRequire',
  'src/context/service-processing.ts':
    'the engine pool and the operation catalog the submit routes read (@mos/engines: worker threads; engine workers stay on Node); behind it the webhook sender (webhooks/sign.ts: node:crypto HMAC), run by the process that runs tasks',
  'src/tasks/task-runner.ts': 'runs tasks on the engine pool (@mos/engines): the process that runs tasks is on Node',
  'src/queue/create-queue.ts': "names BullMQ workers with node:os' hostname (the queue that runs tasks)",
  'src/webhooks/callback-url.ts': "checks a callback URL's host with DNS lookups (node:dns) and node:net's BlockList",
  'src/licensing/licensing.ts':
    'reads the licence file (node:fs), fingerprints it (node:crypto); behind it: license-key.ts (node:crypto Ed25519 KeyObjects, synchronous) and machine-id.ts (the machine id)',
  'src/logging/create-logger.ts': 'pino (Node streams); the app logs through the Logger interface',
  'src/metrics/metrics.ts': "prom-client (Node's process and event-loop metrics); routes read it through the context",
  'src/routes/openapi.ts': "reads the Scalar reference bundle from node_modules (node:fs, node:module's resolve)",
  'src/routes/console-page.ts':
    "reads the console's compiled page from its package's dist/ (node:fs, node:module's resolve), as openapi.ts reads Scalar's",
  'src/routes/probes.ts': "the disk probe's free space (node:fs statfs of the data folder)",
  'src/version.ts': "reads the package's version from package.json (node:fs)",
  'src/config/schema.ts': "the engine threads' default is node:os' availableParallelism (Node 20 has no navigator)",
  'src/tasks/task-events.ts':
    "node:events' EventEmitter for in-process task changes (to become a listener map once the console branch, which edits this file, has landed)",
}

/**
 * Packages that need Node: allowed only from adapter modules. Reaching one from any other module on
 * the path fails the walk, as a `node:` import does.
 */
export const NODE_ONLY_PACKAGES = ['@mos/engines', 'ioredis', 'bullmq', 'piscina', 'busboy', 'listhen', 'sharp', 'pino', 'prom-client']

/** Workspace packages whose sources the walk follows (the API role uses the SDK's contract: it must be web-clean too). */
export const WORKSPACE_SOURCES: Readonly<Record<string, string>> = {
  '@mos/sdk/contract': resolve(REPO_DIR, 'packages/sdk/src/contract/index.ts'),
}
