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
    [{ SERVICE__SERVER__PROT: '1' }, 'unknown setting: SERVICE__SERVER__PROT (see docs/configuration.md)'],
    [{ SERVICE__STORAGE__FS__BASE: ' ' }, 'SERVICE__STORAGE__FS__BASE: must not be empty'],
  ])('stops on %j with a clear message', (env, message) => {
    expect(() => loadConfig(env)).toThrow(new ConfigError(message))
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
