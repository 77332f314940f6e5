import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Variant } from '../../src/index.ts'

export const API_KEY = 'sdk-integration-key'

/** The interface of `@mos/server` these tests use (documented in the server's index). */
interface ServerModule {
  startServer?: (options: { env: Record<string, string> }) => Promise<{ url: string; close(): Promise<void> }>
}

// Imported by a computed name so that the SDK's typecheck and package graph never depend on the
// server (the server depends on the SDK; a devDependency back would make a turbo cycle).
const SERVER_PACKAGE = ['@mos', 'server'].join('/')

/** `startServer` of `@mos/server`, or a reason why it is not available. */
export async function loadStartServer(): Promise<{ startServer?: NonNullable<ServerModule['startServer']>; reason?: string }> {
  try {
    const module = (await import(SERVER_PACKAGE)) as ServerModule
    if (typeof module.startServer !== 'function') return { reason: '@mos/server does not export startServer yet' }
    return { startServer: module.startServer }
  } catch (error) {
    return { reason: `@mos/server cannot be loaded: ${(error as Error).message}` }
  }
}

/** A real server of `variant` on a free port with its own data folder. */
export async function startRealServer(
  startServer: NonNullable<ServerModule['startServer']>,
  variant: Variant,
  extra: Record<string, string> = {},
) {
  const dir = await mkdtemp(join(tmpdir(), `mos-sdk-it-${variant}-`))
  const server = await startServer({
    env: {
      SERVICE__AUTH__API_KEYS: API_KEY,
      SERVICE__SERVER__VARIANT: variant,
      SERVICE__SERVER__PORT: '0',
      SERVICE__SERVER__HOST: '127.0.0.1',
      SERVICE__STORAGE__FS__BASE: dir,
      SERVICE__ENGINES__THREADS: '2',
      // Polling every 50 ms would trip the default 60 per minute; the limiter has its own test.
      SERVICE__SERVER__RATE_LIMIT_PER_MINUTE: '100000',
      ...extra,
    },
  })
  return {
    url: server.url,
    dir,
    async close() {
      await server.close()
      await rm(dir, { recursive: true, force: true })
    },
  }
}
