import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { closedPort } from '../../sdk/test/support/closed-port.ts'
import { REDIS_URL, redisAvailable, uniquePrefix } from '../../../test/support/redis.ts'
import { API_KEY, tempDir } from './support/harness.ts'
import { startMos, stopMos } from './support/processes.ts'

const hasRedis = await redisAvailable()

/**
 * What an operator sees when the compiled service (`npm start`'s entry) cannot start: the exit code
 * and everything it printed, from startMos's refusal. Each case must end in a non-zero exit and a
 * line naming the setting to fix, never a library's own words alone, a stack, or a silent start.
 */
/** The settings of a one-thread service on a free local port with its data in `base`. */
function smallService(base: string): Record<string, string> {
  return {
    SERVICE__AUTH__API_KEYS: API_KEY,
    SERVICE__SERVER__HOST: '127.0.0.1',
    SERVICE__SERVER__PORT: '0',
    SERVICE__STORAGE__FS__BASE: base,
    SERVICE__ENGINES__PRESTART: 'false',
    SERVICE__ENGINES__THREADS: '1',
  }
}

async function startFailure(name: string, env: Record<string, string>): Promise<{ code: string; output: string }> {
  const dir = await tempDir()
  try {
    const started = await startMos(name, {
      ...smallService(dir.path),
      ...env,
    }).then(
      (server) => server,
      (error: Error) => error.message,
    )
    if (typeof started !== 'string') {
      started.child.kill('SIGKILL')
      throw new Error(`${name} started where it should have refused:\n${started.output()}`)
    }
    const match = /exited \((\w+)\) before listening:\n([\s\S]*)$/.exec(started)
    if (!match) throw new Error(started)
    return { code: match[1]!, output: match[2]! }
  } finally {
    await dir.remove()
  }
}

describe('a Redis that does not answer at start', () => {
  it('stops a process keeping records in Redis, naming the setting and hiding its password', async () => {
    const port = await closedPort()
    const { code, output } = await startFailure('records-redis-down', {
      SERVICE__STORAGE__DRIVER: 'redis',
      SERVICE__STORAGE__REDIS__URL: `redis://:hunter2-secret@127.0.0.1:${port}`,
    })
    expect(code).toBe('1')
    expect(output).toContain(
      `cannot start: Redis at redis://:***@127.0.0.1:${port} (SERVICE__STORAGE__REDIS__URL) does not answer: connect ECONNREFUSED 127.0.0.1:${port}; start it, or set SERVICE__STORAGE__REDIS__URL to the Redis of this deployment`,
    )
    expect(output).not.toContain('hunter2-secret')
    expect(output).not.toMatch(/max retries per request/)
  })

  it.skipIf(!hasRedis)('stops an API process whose queue Redis is down at once, naming SERVICE__QUEUE__REDIS__URL', async () => {
    const port = await closedPort()
    const prefix = uniquePrefix('start-up')
    const { code, output } = await startFailure('queue-redis-down', {
      SERVICE__SERVER__ROLE: 'api',
      SERVICE__STORAGE__DRIVER: 'redis',
      SERVICE__STORAGE__REDIS__URL: REDIS_URL,
      SERVICE__STORAGE__REDIS__PREFIX: prefix,
      SERVICE__STORAGE__FILES_DRIVER: 'fs',
      SERVICE__QUEUE__DRIVER: 'bullmq',
      SERVICE__QUEUE__PREFIX: prefix,
      SERVICE__QUEUE__REDIS__URL: `redis://127.0.0.1:${port}`,
    })
    expect(code).toBe('1')
    expect(output).toMatch(
      new RegExp(`cannot start: Redis at redis://127\\.0\\.0\\.1:${port} \\(SERVICE__QUEUE__REDIS__URL\\) does not answer`),
    )
  })
})

describe('a storage folder the service cannot write', () => {
  it('stops start-up naming SERVICE__STORAGE__FS__BASE when the folder lies under a regular file', async () => {
    const dir = await tempDir()
    try {
      const file = join(dir.path, 'not-a-folder')
      await writeFile(file, 'x')
      const base = join(file, 'data')
      const { code, output } = await startFailure('fs-base-under-file', { SERVICE__STORAGE__FS__BASE: base })
      expect(code).toBe('1')
      expect(output).toContain(
        `cannot start: SERVICE__STORAGE__FS__BASE=${base} is not a folder this process can write (ENOTDIR at ${base}): create it and give the service's user write access, or set SERVICE__STORAGE__FS__BASE to such a folder`,
      )
    } finally {
      await dir.remove()
    }
  })
})

describe('a setting spelled with the wrong separators', () => {
  it('stops start-up naming the setting meant, where SERVICE_SERVER_PORT was ignored and the service ran on port 8080', async () => {
    const { code, output } = await startFailure('single-underscores', { SERVICE_SERVER_PORT: '1' })
    expect(code).toBe('1')
    expect(output).toContain('configuration error: unknown setting: SERVICE_SERVER_PORT (did you mean SERVICE__SERVER__PORT?)')
  })

  it('suggests the setting an unknown SERVICE__ name was meant as', async () => {
    const { code, output } = await startFailure('typo', { SERVICE__ENGINES__THREDS: '2' })
    expect(code).toBe('1')
    expect(output).toContain('unknown setting: SERVICE__ENGINES__THREDS (did you mean SERVICE__ENGINES__THREADS?)')
  })

  it("starts beside Kubernetes' service links", async () => {
    const dir = await tempDir()
    const server = await startMos('service-links', {
      ...smallService(dir.path),
      MOS_SERVICE_HOST: '10.0.0.1',
      MOS_SERVICE_PORT: '80',
      KUBERNETES_SERVICE_PORT: '443',
      MOS_PORT: 'tcp://10.0.0.1:80',
    })
    try {
      expect((await fetch(`${server.url}/api/v1/health`)).status).toBe(200)
    } finally {
      await stopMos(server)
      await dir.remove()
    }
  })
})
