import { createServer } from 'node:net'
import { ERROR_TEXTS } from '@mos/sdk/contract'
import { describe, expect, it } from 'vitest'
import { API_KEY, tempDir, useInProcessApp } from './support/harness.ts'
import { startMos } from './support/processes.ts'

describe('CORS when SERVICE__SERVER__CORS_ORIGINS lists origins', () => {
  const service = useInProcessApp('A', { SERVICE__SERVER__CORS_ORIGINS: 'https://app.example,https://other.example' })

  it('answers a preflight for a known path before any key, with the methods of that path', async () => {
    const response = await service.call(
      '/api/v1/tasks/abc/download',
      {
        method: 'OPTIONS',
        headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'x-api-key' },
      },
      null,
    )
    expect(response.status).toBe(204)
    expect(response.headers.get('access-control-allow-origin')).toBe('https://app.example')
    expect(response.headers.get('access-control-allow-methods')).toBe('GET, HEAD, OPTIONS')
    expect(response.headers.get('access-control-allow-headers')).toContain('X-API-Key')
    expect(response.headers.get('access-control-allow-headers')).toContain('Idempotency-Key')
    expect(response.headers.get('vary')).toBe('Origin')
    expect(response.headers.get('x-content-type-options')).toBe('nosniff')
  })

  it('lets a listed origin read the rate-limit headers and Content-Disposition, on answers and errors', async () => {
    for (const path of ['/api/v1/capabilities', '/api/v1/tasks/missing']) {
      const response = await service.call(path, { headers: { Origin: 'https://other.example' } })
      expect(response.headers.get('access-control-allow-origin')).toBe('https://other.example')
      const exposed = response.headers.get('access-control-expose-headers') ?? ''
      for (const name of [
        'X-RateLimit-Limit',
        'X-RateLimit-Remaining',
        'X-RateLimit-Reset',
        'Retry-After',
        'Content-Disposition',
        'Mos-Wait-Max',
        'Idempotent-Replayed',
      ])
        expect(exposed).toContain(name)
      expect(response.headers.get('cross-origin-resource-policy')).toBe('cross-origin')
    }
  })

  it('gives an origin not on the list no CORS header, and 405 lists OPTIONS in Allow', async () => {
    const foreign = await service.call('/api/v1/capabilities', { headers: { Origin: 'https://evil.example' } })
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull()
    const wrong = await service.call('/api/v1/batch/compress')
    expect(wrong.status).toBe(405)
    expect(wrong.headers.get('allow')).toBe('POST, OPTIONS')
    expect(await wrong.json()).toEqual({ error: ERROR_TEXTS.methodNotAllowed('GET', '/api/v1/batch/compress') })
  })
})

describe('the listener', () => {
  it('stops start-up with a clear message and a non-zero exit code when the port is taken', async () => {
    const blocker = createServer()
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
    const port = (blocker.address() as { port: number }).port
    const dir = await tempDir()
    try {
      const failed = await startMos('taken-port', {
        SERVICE__AUTH__API_KEYS: API_KEY,
        SERVICE__SERVER__HOST: '127.0.0.1',
        SERVICE__SERVER__PORT: String(port),
        SERVICE__STORAGE__FS__BASE: dir.path,
        SERVICE__ENGINES__PRESTART: 'false',
      }).then(
        () => undefined,
        (error: Error) => error.message,
      )
      expect(failed).toMatch(
        new RegExp(`exited \\(1\\) before listening:[\\s\\S]*cannot start: port ${port} on 127\\.0\\.0\\.1 is already in use`),
      )
    } finally {
      blocker.close()
      await dir.remove()
    }
  })
})
