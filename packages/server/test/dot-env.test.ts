import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ERROR_TEXTS } from '@mos/sdk/contract'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readDotEnv } from '../src/config/dot-env.ts'
import { ConfigError } from '../src/config/load.ts'
import { tempDir } from './support/harness.ts'
import { startMos, stopMos, type MosProcess } from './support/processes.ts'

describe('readDotEnv', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  beforeAll(async () => {
    dir = await tempDir()
  })
  afterAll(() => dir.remove())

  it('adds what the environment lacks; the environment wins', async () => {
    await writeFile(join(dir.path, '.env'), '# settings\nSERVICE__SERVER__VARIANT=B\nSERVICE__SERVER__PORT="9090"\nOTHER=x y\n')
    const env: NodeJS.ProcessEnv = { SERVICE__SERVER__PORT: '7070' }
    expect(readDotEnv(dir.path, env)).toBe(join(dir.path, '.env'))
    expect(env).toEqual({ SERVICE__SERVER__PORT: '7070', SERVICE__SERVER__VARIANT: 'B', OTHER: 'x y' })
  })

  it('does nothing without a file, and refuses one it cannot read', async () => {
    const empty = join(dir.path, 'empty')
    await mkdir(empty)
    const env: NodeJS.ProcessEnv = {}
    expect(readDotEnv(empty, env)).toBeUndefined()
    expect(env).toEqual({})
    const unreadable = join(dir.path, 'unreadable')
    await mkdir(join(unreadable, '.env'), { recursive: true })
    expect(() => readDotEnv(unreadable, {})).toThrow(ConfigError)
  })
})

describe('the compiled server reads .env in its working directory', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let server: MosProcess | undefined
  beforeAll(async () => {
    dir = await tempDir()
    // The file sets the variant, a key and the data folder (relative to the working directory, so
    // it stays in the temporary folder); the environment sets another key, which must win.
    await writeFile(
      join(dir.path, '.env'),
      [
        'SERVICE__SERVER__VARIANT=B',
        'SERVICE__AUTH__API_KEYS=key-from-dotenv',
        'SERVICE__STORAGE__FS__BASE=./from-dotenv-data',
        'SERVICE__SERVER__HOST=127.0.0.1',
      ].join('\n'),
    )
    server = await startMos(
      'dot-env',
      { SERVICE__SERVER__PORT: '0', SERVICE__AUTH__API_KEYS: 'key-from-env', SERVICE__ENGINES__PRESTART: 'false' },
      60_000,
      { cwd: dir.path },
    )
  })
  afterAll(async () => {
    await stopMos(server)
    await dir.remove()
  })

  it('takes its settings, with the environment winning', async () => {
    expect(server!.output()).toMatch(/variant B listening on http:\/\/127\.0\.0\.1:/)
    const health = (await (await fetch(`${server!.url}/api/v1/health`)).json()) as Record<string, unknown>
    expect(health.status).toBe('healthy')
    const task = (key: string) => fetch(`${server!.url}/api/v1/tasks/nothing`, { headers: { 'X-API-Key': key } })
    // The environment's key opens the API (the task is simply unknown); the .env's key was overridden.
    expect(await (await task('key-from-env')).json()).toEqual({ error: ERROR_TEXTS.taskNotFound('nothing') })
    expect(await (await task('key-from-dotenv')).json()).toEqual({ error: ERROR_TEXTS.unauthorized() })
  })

  it('refuses an unknown setting in it, naming it', async () => {
    const bad = join(dir.path, 'bad')
    await mkdir(bad)
    await writeFile(join(bad, '.env'), 'SERVICE__SERVER__PROT=8080\n')
    const failing = startMos('dot-env-bad', { SERVICE__SERVER__PORT: '0' }, 60_000, { cwd: bad })
    await expect(failing).rejects.toThrow(/exited \(1\) before listening:[\s\S]*SERVICE__SERVER__PROT/)
  })
})
