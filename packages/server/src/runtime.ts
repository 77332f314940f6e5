/** The JavaScript runtimes the service starts on. */
export type RuntimeName = 'node' | 'deno' | 'bun' | 'workerd'

/**
 * The runtime this process runs on, from the globals each one defines (Bun and Deno also emulate
 * Node's `process`, so they are asked first; workerd names itself in `navigator.userAgent`).
 */
export function currentRuntime(): RuntimeName {
  const globals = globalThis as { Bun?: unknown; Deno?: unknown; navigator?: { userAgent?: string } }
  if (globals.Bun !== undefined) return 'bun'
  if (globals.Deno !== undefined) return 'deno'
  if (globals.navigator?.userAgent === 'Cloudflare-Workers') return 'workerd'
  return 'node'
}

/**
 * Roles each runtime can take. Tasks run in the engine pool's `node:worker_threads` threads with
 * resource limits and native codecs, which only Node provides as the pool needs them: elsewhere the
 * process is an API in front of Node workers (shared Redis queue and records, shared files).
 */
export function rolesOn(runtime: RuntimeName): readonly string[] {
  return runtime === 'node' ? ['all', 'api', 'worker'] : ['api']
}
