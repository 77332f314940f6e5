import { describe, expect, it } from 'vitest'
import { ConfigError, listSettings, loadConfig } from '../src/index.ts'
import { readFile } from 'node:fs/promises'

describe('configuration', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({})
    expect(config.server).toMatchObject({ port: 8080, host: '0.0.0.0', variant: 'A', rateLimitPerMinute: 60 })
    expect(config.storage).toMatchObject({ driver: 'fs', fs: { base: './data' } })
    expect(config.auth.apiKeys).toEqual([])
    expect(config.engines.threads).toBeGreaterThanOrEqual(1)
  })

  it('reads SERVICE__SECTION__KEY variables, words joined by _', () => {
    const config = loadConfig({
      SERVICE__SERVER__PORT: '9000',
      SERVICE__SERVER__VARIANT: 'b',
      SERVICE__SERVER__RATE_LIMIT_PER_MINUTE: '5',
      SERVICE__AUTH__API_KEYS: ' one, two ,,three',
      SERVICE__STORAGE__FS__BASE: '/tmp/x',
      SERVICE__ENGINES__THREADS: '3',
      OTHER_VARIABLE: 'ignored',
    })
    expect(config.server.port).toBe(9000)
    expect(config.server.variant).toBe('B')
    expect(config.server.rateLimitPerMinute).toBe(5)
    expect(config.auth.apiKeys).toEqual(['one', 'two', 'three'])
    expect(config.storage.fs.base).toBe('/tmp/x')
    expect(config.engines.threads).toBe(3)
  })

  it.each([
    [{ SERVICE__SERVER__PORT: 'eighty' }, 'SERVICE__SERVER__PORT: expected an integer from 0 to 65535, got "eighty"'],
    [{ SERVICE__SERVER__PORT: '70000' }, 'SERVICE__SERVER__PORT: expected an integer from 0 to 65535, got "70000"'],
    [{ SERVICE__SERVER__VARIANT: 'C' }, 'SERVICE__SERVER__VARIANT: expected one of A, B, got "C"'],
    [{ SERVICE__ENGINES__THREADS: '0' }, 'SERVICE__ENGINES__THREADS: expected an integer from 1 to 256, got "0"'],
    [
      { SERVICE__SERVER__PROT: '1' },
      'unknown setting: SERVICE__SERVER__PROT (did you mean SERVICE__SERVER__PORT?) (see docs/configuration.md)',
    ],
    [{ SERVICE__SERVER__WHATEVER: '1' }, 'unknown setting: SERVICE__SERVER__WHATEVER (see docs/configuration.md)'],
    [
      { SERVICE__STORAGE__S3_BUCKET: 'b' },
      'unknown setting: SERVICE__STORAGE__S3_BUCKET (did you mean SERVICE__STORAGE__S3__BUCKET?) (see docs/configuration.md)',
    ],
    // Single underscores, or lower case, were ignored without a word: the service ran on its defaults.
    [
      { SERVICE_SERVER_PORT: '1' },
      'unknown setting: SERVICE_SERVER_PORT (did you mean SERVICE__SERVER__PORT?) (see docs/configuration.md)',
    ],
    [
      { service__server__port: '1', SERVICE_AUTH_API_KEYS: 'k' },
      'unknown settings: service__server__port (did you mean SERVICE__SERVER__PORT?), SERVICE_AUTH_API_KEYS (did you mean SERVICE__AUTH__API_KEYS?) (see docs/configuration.md)',
    ],
    [{ SERVICE__STORAGE__FS__BASE: ' ' }, 'SERVICE__STORAGE__FS__BASE: must not be empty'],
  ])('stops on %j with a clear message', (env, message) => {
    expect(() => loadConfig(env)).toThrow(new ConfigError(message))
  })

  it("leaves alone the variables Kubernetes' service links and other programs set", () => {
    const env = {
      MOS_SERVICE_HOST: '10.0.0.1',
      MOS_SERVICE_PORT: '80',
      MOS_SERVICE_PORT_HTTP: '80',
      MOS_PORT: 'tcp://10.0.0.1:80',
      KUBERNETES_SERVICE_HOST: '10.0.0.2',
      KUBERNETES_SERVICE_PORT: '443',
      REDIS_SERVICE_PORT: '6379',
      SERVICE_NAME: 'mos',
      SERVICE__SERVER__PORT: '9000',
    }
    expect(loadConfig(env).server.port).toBe(9000)
  })

  it('documents for every on/off setting exactly the words it takes', async () => {
    const docs = await readFile(new URL('../../../docs/configuration.md', import.meta.url), 'utf8')
    // Spellings an operator may try: the docs must list each one taken and none refused.
    const tried = ['true', 'false', '1', '0', 'yes', 'no', 'on', 'off', 'y', 'n', 'enabled', 'disabled', '2']
    for (const { name } of listSettings().filter((entry) => entry.meta.kind === 'boolean')) {
      const row = docs.split('\n').find((line) => line.startsWith(`| \`${name}\` |`))
      const documented = new Set(row?.split(' | ')[2]?.split(/[^a-z0-9]+/) ?? [])
      for (const word of tried) {
        const taken = (() => {
          try {
            loadConfig({ [name]: word.toUpperCase() })
            return true
          } catch {
            return false
          }
        })()
        expect({ name, word, taken }).toEqual({ name, word, taken: documented.has(word) })
      }
    }
  })

  it('lists every setting in .env.example and docs/configuration.md', async () => {
    const example = await readFile(new URL('../../../.env.example', import.meta.url), 'utf8')
    const docs = await readFile(new URL('../../../docs/configuration.md', import.meta.url), 'utf8')
    for (const { name } of listSettings()) {
      expect(example, name).toContain(name)
      expect(docs, name).toContain(name)
    }
  })
})
