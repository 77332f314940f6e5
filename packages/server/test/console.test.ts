import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { assimp, corpusFiles } from '../../../test/support/corpus.ts'
import { throwAwayLicenceEnv } from '../../../test/support/service-env.ts'
import { until } from '../../../test/support/poll.ts'
import {
  COMPRESS_PRESETS,
  IMPLEMENTED_TASK_TYPES,
  OPERATION_ENDPOINTS,
  OUTPUT_FORMATS,
  RATE_LIMIT_HEADERS,
  type Variant,
} from '@mos/sdk/contract'
import { createApp, createServiceContext, loadConfig, type ServiceContext } from '../src/index.ts'
import { parsePasswordHash, verifyPassword, hashPassword } from '../src/console/password-hash.ts'
import { createLogger } from '../src/logging/create-logger.ts'
import { API_KEY, form, inProcessApp, tempDir, testEnv, VARIANTS } from './support/harness.ts'
import { CONSOLE_PASSWORD, consolePasswordHash, readEventsUntil, signIn, type ConsoleClient, type Fetcher } from './support/console.ts'

const { available, paths } = corpusFiles({
  box: assimp('glTF2', 'BoxTextured-glTF-Binary', 'BoxTextured.glb'),
  duck: assimp('Collada', 'duck.dae'),
})

/** An in-process app whose console signs in with CONSOLE_PASSWORD; requests to `origin` (not loopback by default). */
function useConsoleApp(variant: Variant, extra: Record<string, string> = {}, origin = 'http://mos.test') {
  let app: ReturnType<typeof inProcessApp> | undefined
  let dir: Awaited<ReturnType<typeof tempDir>> | undefined
  beforeAll(async () => {
    dir = await tempDir()
    app = inProcessApp(testEnv(variant, dir.path, { SERVICE__CONSOLE__ADMIN_PASSWORD_HASH: await consolePasswordHash(), ...extra }))
  })
  afterAll(async () => {
    await app?.close()
    await dir?.remove()
  })
  const fetcher: Fetcher = (path, init) => app!.app.fetch(new Request(`${origin}${path}`, init)) as Promise<Response>
  return {
    fetcher,
    /** An API request with the test key (`null`: none). */
    api: (path: string, init: RequestInit = {}, key: string | null = API_KEY) => app!.call(path, init, key),
    get context(): ServiceContext {
      return app!.context
    },
  }
}

const sessionKeys = (ctx: ServiceContext) => ctx.storage.stores.records.getKeys('console-sessions')
const json = async (response: Response) => (await response.json()) as Record<string, unknown>

describe('console password hashes', () => {
  it('are scrypt with a random salt, verified only by the same password', async () => {
    const first = await hashPassword('a long enough password')
    const second = await hashPassword('a long enough password')
    expect(first).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/)
    expect(second).not.toBe(first)
    const parsed = parsePasswordHash(first)!
    expect(await verifyPassword('a long enough password', parsed)).toBe(true)
    expect(await verifyPassword('a long enough passwore', parsed)).toBe(false)
    expect(await verifyPassword('', parsed)).toBe(false)
  })

  it.each([
    'bcrypt$10$abc',
    'scrypt$1000$8$1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2g',
    'scrypt$2097152$8$1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2g',
    'scrypt$16384$8$1$c2FsdA$aGFzaGhhc2hoYXNoaGFzaGhhc2g',
    'scrypt$16384$8$1$c2FsdHNhbHRzYWx0$a+b/',
  ])('refuse %s at start-up, naming the setting', async (hash) => {
    expect(parsePasswordHash(hash)).toBeUndefined()
    const dir = await tempDir()
    const context = createServiceContext(loadConfig(testEnv('A', dir.path, { SERVICE__CONSOLE__ADMIN_PASSWORD_HASH: hash })))
    try {
      expect(() => createApp(context)).toThrow(/SERVICE__CONSOLE__ADMIN_PASSWORD_HASH: expected scrypt/)
    } finally {
      await context.close({ drain: false })
      await dir.remove()
    }
  })
})

/** Runs the built `mos-console-password` with `stdin` piped in. */
function consolePasswordBin(args: string[], stdin: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const bin = new URL('../bin/mos-console-password.js', import.meta.url)
  const child = spawn(process.execPath, [bin.pathname, ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk))
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk))
  child.stdin.end(stdin)
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })))
}

describe('npm run console-password (the built bin)', () => {
  it('prints a hash of the first line of stdin that signs in, and nothing else on stdout', async () => {
    const run = await consolePasswordBin([], 'a password from a pipe\nignored second line\n')
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/^scrypt\$[^\n]+\n$/)
    const hash = parsePasswordHash(run.stdout)!
    expect(await verifyPassword('a password from a pipe', hash)).toBe(true)
    expect(await verifyPassword('a password from a pipe\n', hash)).toBe(false)
  })
  it('refuses a password given as an argument, and one too short', async () => {
    const argv = await consolePasswordBin(['a password on the command line'], '')
    expect([argv.code, argv.stdout]).toEqual([2, ''])
    expect(argv.stderr).toContain('takes no arguments')
    const short = await consolePasswordBin([], 'short\n')
    expect([short.code, short.stdout]).toEqual([1, ''])
    expect(short.stderr).toContain('at least 12 characters')
  })
})

describe.each(VARIANTS)('console sign-in and sessions in variant %s', (variant) => {
  const mos = useConsoleApp(variant)

  it('refuses a wrong password with 401 and no cookie, and malformed sign-ins with 400 or 413', async () => {
    const wrong = await mos.fetcher('/auth/login', { method: 'POST', body: JSON.stringify({ password: `${CONSOLE_PASSWORD}x` }) })
    expect(wrong.status).toBe(401)
    expect(await wrong.json()).toEqual({ error: 'wrong password' })
    expect(wrong.headers.get('set-cookie')).toBeNull()
    // The API key is no console password.
    expect((await mos.fetcher('/auth/login', { method: 'POST', body: JSON.stringify({ password: API_KEY }) })).status).toBe(401)
    const missing = await mos.fetcher('/auth/login', { method: 'POST', body: '{}' })
    expect([missing.status, await missing.json()]).toEqual([400, { error: expect.stringContaining('password') }])
    const notJson = await mos.fetcher('/auth/login', { method: 'POST', body: 'password=x' })
    expect([notJson.status, await notJson.json()]).toEqual([400, { error: expect.stringContaining('not JSON') }])
    const huge = await mos.fetcher('/auth/login', { method: 'POST', body: JSON.stringify({ password: 'x'.repeat(9000) }) })
    expect(huge.status).toBe(413)
    expect(await sessionKeys(mos.context)).toEqual([])
  })

  it('signs in with an httpOnly, SameSite=Strict, Secure cookie whose digest alone is stored', async () => {
    const response = await mos.fetcher('/auth/login', { method: 'POST', body: JSON.stringify({ password: CONSOLE_PASSWORD }) })
    expect(response.status).toBe(200)
    const body = (await response.json()) as { user: string; csrf_token: string; expires_at: string }
    expect(body.user).toBe('admin')
    expect(body.csrf_token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const hoursLeft = (Date.parse(body.expires_at) - Date.now()) / 3_600_000
    expect(hoursLeft).toBeGreaterThan(11.9)
    expect(hoursLeft).toBeLessThanOrEqual(12)
    const cookie = response.headers.get('set-cookie')!
    const [pair, ...attributes] = cookie.split('; ')
    const value = pair!.replace(/^mos_session=/, '')
    expect(value).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(attributes).toEqual(expect.arrayContaining(['HttpOnly', 'SameSite=Strict', 'Path=/', 'Secure']))
    expect(Number(attributes.find((a) => a.startsWith('Max-Age='))!.slice(8))).toBeGreaterThan(12 * 3600 - 60)
    // Stored under the SHA-256 of the cookie, and the cookie itself appears nowhere in the record.
    const key = `console-sessions:${createHash('sha256').update(value).digest('hex')}`
    expect(await sessionKeys(mos.context)).toContain(key)
    expect(JSON.stringify(await mos.context.storage.stores.records.getItem(key))).not.toContain(value)

    const me = await mos.fetcher('/auth/me', { headers: { cookie: pair! } })
    expect(await me.json()).toEqual(body)
  })

  it('answers GET /auth/me 401 without a session, with an unknown cookie and with only an API key', async () => {
    for (const headers of [
      {} as Record<string, string>,
      { cookie: `mos_session=${'A'.repeat(43)}` },
      { cookie: 'mos_session=../../etc' },
      { 'X-API-Key': API_KEY },
    ]) {
      const response = await mos.fetcher('/auth/me', { headers })
      expect([response.status, await response.json()]).toEqual([401, { error: 'not signed in' }])
    }
  })

  it("answers GET /auth/session 200 either way: /auth/me's record and signed_in true, or signed_in false where /auth/me says 401", async () => {
    for (const headers of [{} as Record<string, string>, { cookie: `mos_session=${'A'.repeat(43)}` }, { 'X-API-Key': API_KEY }]) {
      const response = await mos.fetcher('/auth/session', { headers })
      expect([response.status, response.headers.get('cache-control'), await response.json()]).toEqual([
        200,
        'no-store',
        { signed_in: false },
      ])
    }
    const admin = await signIn(mos.fetcher)
    const me = await (await mos.fetcher('/auth/me', { headers: { cookie: admin.cookie } })).json()
    const session = await mos.fetcher('/auth/session', { headers: { cookie: admin.cookie } })
    expect([session.status, await session.json()]).toEqual([200, { signed_in: true, ...me }])
  })

  it('keeps the API and the console apart: no cookie opens the API, no API key opens the console', async () => {
    const admin = await signIn(mos.fetcher)
    const noKey = await mos.api('/api/v1/tasks', {}, null)
    const cookieOnly = await mos.api('/api/v1/tasks', { headers: { cookie: admin.cookie } }, null)
    expect(cookieOnly.status).toBe(401)
    expect(await cookieOnly.json()).toEqual(await noKey.json())
    for (const path of ['/config', '/events', '/admin/tasks', '/admin/config', '/admin/queue', '/admin/metrics', '/admin/license']) {
      const keyOnly = await mos.fetcher(path, { headers: { 'X-API-Key': API_KEY } })
      expect([path, keyOnly.status, await keyOnly.json()]).toEqual([path, 401, { error: 'not signed in' }])
    }
    const keyed = await mos.fetcher('/admin/submit/compress', { method: 'POST', headers: { 'X-API-Key': API_KEY } })
    expect(keyed.status).toBe(401)
    // The session itself works.
    expect((await admin.call('/admin/tasks')).status).toBe(200)
  })

  it('refuses state-changing requests without the CSRF token, with another session’s, or from another origin', async () => {
    const admin = await signIn(mos.fetcher)
    const other = await signIn(mos.fetcher)
    const cancel = (headers: Record<string, string>) => mos.fetcher('/admin/tasks/no-such-task/cancel', { method: 'POST', headers })
    const refused: Record<string, string>[] = [
      { cookie: admin.cookie },
      { cookie: admin.cookie, 'x-csrf-token': 'x' },
      { cookie: admin.cookie, 'x-csrf-token': other.csrf },
      { cookie: admin.cookie, 'x-csrf-token': admin.csrf, origin: 'https://evil.example' },
      { cookie: admin.cookie, 'x-csrf-token': admin.csrf, origin: 'null' },
    ]
    for (const headers of refused) {
      const response = await cancel(headers)
      expect([response.status, Object.keys(await json(response))]).toEqual([403, ['error']])
    }
    // Past both locks the route itself answers: 404 for a task that does not exist.
    const accepted: Record<string, string>[] = [
      { cookie: admin.cookie, 'x-csrf-token': admin.csrf },
      { cookie: admin.cookie, 'x-csrf-token': admin.csrf, origin: 'http://mos.test' },
    ]
    for (const headers of accepted) {
      expect((await cancel(headers)).status).toBe(404)
    }
    const deleted = await mos.fetcher('/admin/tasks/no-such-task', { method: 'DELETE', headers: { cookie: admin.cookie } })
    expect(deleted.status).toBe(403)
    // A sign-in posted from another site's page is refused too (login CSRF).
    const crossLogin = await mos.fetcher('/auth/login', {
      method: 'POST',
      headers: { origin: 'https://evil.example' },
      body: JSON.stringify({ password: CONSOLE_PASSWORD }),
    })
    expect(crossLogin.status).toBe(403)
    // Logging out is a state change: without the token the session stays.
    expect((await mos.fetcher('/auth/logout', { method: 'POST', headers: { cookie: admin.cookie } })).status).toBe(403)
    expect((await admin.call('/auth/me')).status).toBe(200)
  })

  it('logs out: 204, the cookie cleared, the session gone from the store', async () => {
    const admin = await signIn(mos.fetcher)
    const before = await sessionKeys(mos.context)
    const response = await admin.call('/auth/logout', { method: 'POST' })
    expect(response.status).toBe(204)
    expect(response.headers.get('set-cookie')).toMatch(/^mos_session=; HttpOnly; SameSite=Strict; Path=\/; Max-Age=0/)
    expect(await sessionKeys(mos.context)).toHaveLength(before.length - 1)
    expect((await admin.call('/auth/me')).status).toBe(401)
    expect((await admin.call('/admin/tasks')).status).toBe(401)
  })

  it('ends an open /events stream once its session ends: signed out (at once), or removed by another process', async () => {
    const admin = await signIn(mos.fetcher)
    const events = await admin.call('/events')
    expect(events.status).toBe(200)
    // Signed out in another tab: the stream opened with that session ends, and a reconnect is refused.
    expect((await admin.call('/auth/logout', { method: 'POST' })).status).toBe(204)
    expect(await new Response(events.body).text()).toMatch(/^retry: \d+\n\n/)
    expect((await admin.call('/events')).status).toBe(401)

    // Signed out on another API process of a cluster: the session is gone from the shared store, and the stream
    // learns it at its next check of the session.
    const other = await signIn(mos.fetcher)
    const stream = await other.call('/events')
    const key = `console-sessions:${createHash('sha256').update(other.cookie.slice('mos_session='.length)).digest('hex')}`
    await mos.context.storage.stores.records.removeItem(key)
    expect(await new Response(stream.body).text()).toMatch(/^retry: \d+\n\n/)
  })

  it('refuses an expired session and removes it; the sweep removes expired sessions nobody asked for', async () => {
    const records = mos.context.storage.stores.records
    const expire = async (admin: ConsoleClient) => {
      const key = `console-sessions:${createHash('sha256').update(admin.cookie.slice('mos_session='.length)).digest('hex')}`
      const session = (await records.getItem(key)) as Record<string, unknown>
      await records.setItem(key, { ...session, expires_at: new Date(Date.now() - 1000).toISOString() })
      return key
    }
    const asked = await signIn(mos.fetcher)
    const askedKey = await expire(asked)
    expect([(await asked.call('/auth/me')).status, (await asked.call('/config')).status]).toEqual([401, 401])
    expect(await records.hasItem(askedKey)).toBe(false)

    const forgotten = await signIn(mos.fetcher)
    const live = await signIn(mos.fetcher)
    const forgottenKey = await expire(forgotten)
    const report = await mos.context.processing.sweeper.sweepOnce()
    expect(report.sessions).toBe(1)
    expect(await records.hasItem(forgottenKey)).toBe(false)
    expect((await live.call('/auth/me')).status).toBe(200)
  })

  it('keeps the HTTP policy on its routes: 405 with Allow, the security headers', async () => {
    const wrongMethod = await mos.fetcher('/auth/login')
    expect(wrongMethod.status).toBe(405)
    expect(wrongMethod.headers.get('allow')).toContain('POST')
    const putTask = await mos.fetcher('/admin/tasks/x', { method: 'PUT' })
    expect(putTask.status).toBe(405)
    expect(putTask.headers.get('allow')!.split(', ').sort()).toEqual(['DELETE', 'GET', 'HEAD'])
    const me = await mos.fetcher('/auth/me')
    expect(me.headers.get('x-content-type-options')).toBe('nosniff')
    expect(me.headers.get('x-frame-options')).toBe('DENY')
    expect(me.headers.get('content-security-policy')).toContain("default-src 'none'")
    expect((await mos.fetcher('/admin/no-such-thing')).status).toBe(404)
  })
})

describe('console cookie on a loopback host', () => {
  const mos = useConsoleApp('A', {}, 'http://127.0.0.1:8080')
  it('has no Secure attribute (auto), so plain http://localhost works', async () => {
    const response = await mos.fetcher('/auth/login', { method: 'POST', body: JSON.stringify({ password: CONSOLE_PASSWORD }) })
    expect(response.status).toBe(200)
    expect(response.headers.get('set-cookie')).not.toContain('Secure')
  })
})

describe('console routes with CORS on for the API', () => {
  const mos = useConsoleApp('A', { SERVICE__SERVER__CORS_ORIGINS: 'https://app.example.com' })
  it('never let another origin send the CSRF header or read an answer with the cookie', async () => {
    const preflight = await mos.fetcher('/admin/tasks/x/cancel', {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-csrf-token',
      },
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get('access-control-allow-headers')!.toLowerCase()).not.toContain('x-csrf-token')
    const admin = await signIn(mos.fetcher)
    const read = await mos.fetcher('/admin/tasks', { headers: { origin: 'https://app.example.com', cookie: admin.cookie } })
    expect(read.headers.get('access-control-allow-credentials')).toBeNull()
    // Even with the token (which another origin cannot read), the Origin is not this console's.
    const cancel = await mos.fetcher('/admin/tasks/x/cancel', {
      method: 'POST',
      headers: { origin: 'https://app.example.com', cookie: admin.cookie, 'x-csrf-token': admin.csrf },
    })
    expect(cancel.status).toBe(403)
  })
})

describe('console sign-in throttling', () => {
  const mos = useConsoleApp('A', { SERVICE__SERVER__AUTH_FAILURES_PER_MINUTE: '3' })
  it('answers 429 with Retry-After after repeated wrong passwords, even to the right one', async () => {
    const attempt = (password: string) => mos.fetcher('/auth/login', { method: 'POST', body: JSON.stringify({ password }) })
    for (let i = 0; i < 3; i++) expect((await attempt(`wrong-${i}`)).status).toBe(401)
    const throttled = await attempt('wrong-again')
    expect(throttled.status).toBe(429)
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await attempt(CONSOLE_PASSWORD)).status).toBe(429)
  })
})

describe('console routes and the guards (variant A, one request a minute per key)', () => {
  const mos = useConsoleApp('A', { SERVICE__SERVER__RATE_LIMIT_PER_MINUTE: '1' })
  it('run the licence guard but not the per-key rate limit: a session is no API key', async () => {
    const admin = await signIn(mos.fetcher)
    // The limit holds on the API: the key's second request is refused.
    const first = await mos.api('/api/v1/license/info')
    expect([first.status, first.headers.get(RATE_LIMIT_HEADERS.limit)]).toEqual([200, '1'])
    const document = await json(first)
    expect(document).toMatchObject({ mode: 'trial', trial: { enabled: true } })
    expect((await mos.api('/api/v1/license/info')).status).toBe(429)
    for (let i = 0; i < 3; i++) {
      const response = await admin.call('/admin/license')
      expect([response.status, response.headers.get(RATE_LIMIT_HEADERS.limit)]).toEqual([200, null])
      // The API's document with the contract's placeholder expiry; the console's says a trial without a key expires never.
      expect(await json(response)).toEqual({ ...document, expires_at: null })
    }
    expect(document.expires_at).toBe('1970-01-01T00:00:00.000Z')
  })
})

describe('the console licence document of a trial without a key (variant B)', () => {
  const mos = useConsoleApp('B')
  it('has no expiry (null) where the API document, bound by the contract, has 0', async () => {
    const admin = await signIn(mos.fetcher)
    const api = await json(await mos.api('/api/v1/license/info'))
    expect(api).toMatchObject({ status: 'trial', license_expires_at: 0, days_until_expiry: 0 })
    expect(await json(await admin.call('/admin/license'))).toEqual({ ...api, license_expires_at: null, days_until_expiry: null })
  })
})

describe('console without a password hash', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>
  let app: ReturnType<typeof inProcessApp>
  let disabled: ReturnType<typeof inProcessApp>
  beforeAll(async () => {
    dir = await tempDir()
    app = inProcessApp(testEnv('A', `${dir.path}/a`))
    disabled = inProcessApp(testEnv('A', `${dir.path}/b`, { SERVICE__CONSOLE__ENABLED: 'false' }))
  })
  afterAll(async () => {
    await app.close()
    await disabled.close()
    await dir.remove()
  })
  it('answers sign-in 503 naming the setting when API keys are configured', async () => {
    const response = await app.call('/auth/login', { method: 'POST', body: JSON.stringify({ password: 'anything' }) }, null)
    expect(response.status).toBe(503)
    expect(await response.json()).toEqual({ error: 'the console has no sign-in configured: set SERVICE__CONSOLE__ADMIN_PASSWORD_HASH' })
  })
  it('logs that 503 as a warning with its text: a deployment without sign-in, not a fault', async () => {
    const lines: string[] = []
    const logger = createLogger({ level: 'info', format: 'json', destination: { write: (line: string) => lines.push(line) } })
    const context = createServiceContext(loadConfig(testEnv('A', `${dir.path}/c`)), { logger })
    try {
      const response = await createApp(context).fetch(
        new Request('http://mos.test/auth/login', { method: 'POST', body: JSON.stringify({ password: 'anything' }) }),
      )
      expect(response.status).toBe(503)
      const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.msg === 'request')
      expect(logged).toEqual([
        expect.objectContaining({
          level: 'warn',
          status: 503,
          route: '/auth/login',
          error: expect.stringContaining('no sign-in configured'),
        }),
      ])
    } finally {
      await context.close({ drain: false })
    }
  })
  it('has no console routes at all when SERVICE__CONSOLE__ENABLED is false', async () => {
    for (const path of ['/auth/login', '/auth/me', '/config', '/admin/tasks'])
      expect((await disabled.call(path, {}, null)).status).toBe(404)
  })
})

/** Sample values of one field that the server must accept, and some it must refuse. */
function samples(field: { kind: string; min: number | null; max: number | null; min_exclusive: boolean; choices: string[] | null }) {
  switch (field.kind) {
    case 'integer':
      return { accepted: [field.min!, field.max!], refused: [field.min! - 1, field.max! + 1, 1.5] }
    case 'number':
      return {
        accepted: [field.min_exclusive ? field.min! + 0.01 : field.min!, field.max!],
        refused: [field.min_exclusive ? field.min! : field.min! - 0.01, field.max! + 0.01],
      }
    case 'enum':
      return { accepted: field.choices!, refused: ['not-a-choice'] }
    default:
      return { accepted: [true, false], refused: ['maybe'] }
  }
}

describe.each(VARIANTS)('GET /config in variant %s', (variant) => {
  const mos = useConsoleApp(variant)
  type Field = {
    name: string
    kind: string
    required: boolean
    default: unknown
    min: number | null
    max: number | null
    min_exclusive: boolean
    choices: string[] | null
    applies_when: { field: string; equals: string | string[]; orAbsent?: boolean } | null
    alternatives: { when: { field: string; equals: string }; min: number | null; max: number | null }[]
    presets: Record<string, Record<string, string | number | boolean>> | null
  }
  type Operation = { type: string; path: string; admin_path: string; input_formats: string[]; images: boolean; fields: Field[] }

  it('lists exactly the operations the variant implements, each field as the server validates it', async () => {
    const admin = await signIn(mos.fetcher)
    const document = (await (await admin.call('/config')).json()) as {
      variant: string
      operations: Operation[]
      batch: { admin_path: string; max_files: number | null; fields: Field[] }
      limits: Record<string, unknown>
    }
    expect(document.variant).toBe(variant)
    expect(document.operations.map((operation) => operation.type)).toEqual([...IMPLEMENTED_TASK_TYPES[variant]])
    for (const operation of document.operations) {
      const endpoint = OPERATION_ENDPOINTS.find((candidate) => candidate.type === operation.type)!
      expect(operation.path).toBe(endpoint.path)
      expect(operation.admin_path).toBe(`/admin/submit${endpoint.path}`)
      expect(operation.images).toBe(operation.type.startsWith('texture'))
      // The fields the document says are required, filled with a valid value: the server's parser accepts them.
      const base = Object.fromEntries(operation.fields.filter((f) => f.required).map((f) => [f.name, String(samples(f).accepted[0])]))
      expect(endpoint.parseFields(variant, base).ok, `${operation.type} with ${JSON.stringify(base)}`).toBe(true)
      for (const field of operation.fields) {
        // The condition's value (its first, where it lists several: texture_quality's jpeg or webp).
        const listed = (when: { equals: string | string[] }) => [when.equals].flat()
        const condition = field.applies_when ? { [field.applies_when.field]: listed(field.applies_when)[0]! } : {}
        const { accepted, refused } = samples(field)
        for (const value of accepted) {
          const raw = { ...base, ...condition, [field.name]: String(value) }
          expect(endpoint.parseFields(variant, raw).ok, `${operation.type} ${JSON.stringify(raw)}`).toBe(true)
        }
        for (const value of refused) {
          const raw = { ...base, ...condition, [field.name]: String(value) }
          expect(endpoint.parseFields(variant, raw).ok, `${operation.type} ${JSON.stringify(raw)}`).toBe(false)
        }
        for (const alternative of field.alternatives) {
          const raw = { ...base, [alternative.when.field]: alternative.when.equals }
          expect(endpoint.parseFields(variant, { ...raw, [field.name]: String(alternative.max) }).ok).toBe(true)
          expect(endpoint.parseFields(variant, { ...raw, [field.name]: String(alternative.max! + 1) }).ok).toBe(false)
        }
        if (field.applies_when) {
          // Sent without its condition, the field is refused: the form must hide it.
          const { field: on } = field.applies_when
          const choices = operation.fields.find((candidate) => candidate.name === on)!.choices ?? []
          const other = { ...base, [field.name]: String(accepted[0]) }
          const otherValue = choices.find((choice) => !listed(field.applies_when!).includes(String(choice)))
          if (otherValue) other[on] = String(otherValue)
          else delete other[on]
          expect(endpoint.parseFields(variant, other).ok).toBe(false)
        }
      }
    }
    const compress = document.operations.find((operation) => operation.type === 'compress')!
    expect(compress.fields.find((field) => field.name === 'level')!.min).toBe(variant === 'A' ? 1 : 0)
    // A preset's bundle is there for the form to show, exactly what the parser fills in; no other field has one.
    const preset = compress.fields.find((field) => field.name === 'preset')!
    expect(preset.presets).toEqual(COMPRESS_PRESETS)
    expect(preset.choices).toEqual(Object.keys(COMPRESS_PRESETS))
    const compressEndpoint = OPERATION_ENDPOINTS.find((endpoint) => endpoint.type === 'compress')!
    for (const [name, sets] of Object.entries(preset.presets!)) {
      const parsed = compressEndpoint.parseFields(variant, { engine: 'meshopt', preset: name })
      expect(parsed.ok && parsed.value, name).toMatchObject(sets)
    }
    const others = [...document.operations.flatMap((operation) => operation.fields), ...document.batch.fields]
    expect(others.filter((field) => field.presets !== null).map((field) => field.name)).toEqual(['preset'])
    const convert = document.operations.find((operation) => operation.type === 'convert')!
    expect(convert.fields.find((field) => field.name === 'target_format')!.choices).toEqual([...OUTPUT_FORMATS[variant]])
    expect(compress.input_formats).toEqual(expect.arrayContaining(['glb', 'gltf', 'obj', 'fbx', 'dae', 'stl', 'ply']))
    expect(document.batch.admin_path).toBe('/admin/submit/batch/compress')
    expect(document.batch.fields.map((field) => field.name)).toEqual(['engine', 'level'])
    // No licence: the trial's limits.
    expect(document.limits).toMatchObject({
      max_file_size_mb: 50,
      max_batch_count: 5,
      tier: 'trial',
      trial: { active: true, max_files: 100 },
    })
    expect(document.batch.max_files).toBe(5)
  })

  it('offers input formats the submit really takes: one outside them is refused with the API’s 400', async () => {
    const admin = await signIn(mos.fetcher)
    const document = (await (await admin.call('/config')).json()) as { operations: Operation[] }
    const compress = document.operations.find((operation) => operation.type === 'compress')!
    expect(compress.input_formats).not.toContain('txt')
    const response = await admin.call('/admin/submit/compress', {
      method: 'POST',
      body: await form({ engine: 'draco' }, [{ name: 'notes.txt', bytes: new TextEncoder().encode('hello') }]),
    })
    const api = await mos.api('/api/v1/compress', {
      method: 'POST',
      body: await form({ engine: 'draco' }, [{ name: 'notes.txt', bytes: new TextEncoder().encode('hello') }]),
    })
    expect([response.status, await response.json()]).toEqual([400, await api.json()])
  })
})

describe('GET /admin/config', () => {
  const licence = throwAwayLicenceEnv()
  const secrets = {
    SERVICE__AUTH__API_KEYS: `${API_KEY},second-secret-key-xyz`,
    SERVICE__AUTH__ADMIN_KEYS: 'admin-secret-key-xyz',
    SERVICE__WEBHOOKS__SECRET: 'webhook-secret-xyz',
    SERVICE__STORAGE__S3__ACCESS_KEY_ID: 'AKIASECRETXYZ',
    SERVICE__STORAGE__S3__SECRET_ACCESS_KEY: 's3-secret-access-xyz',
    SERVICE__STORAGE__S3__SESSION_TOKEN: 's3-session-token-xyz',
    SERVICE__STORAGE__S3__ENDPOINT: 'http://s3user:s3-endpoint-password-xyz@127.0.0.1:9',
    SERVICE__STORAGE__REDIS__URL: 'redis://mos:redis-password-xyz@127.0.0.1:6379/0',
    SERVICE__QUEUE__REDIS__URL: 'redis://:queue-password-xyz@127.0.0.1:6379?password=query-password-xyz',
    ...licence,
  }
  // Variant B: no rate limit, so the rate-limit Redis URL is read but never dialled.
  const mos = useConsoleApp('B', { ...secrets, SERVICE__RATE_LIMIT__REDIS_URL: 'redis://:ratelimit-password-xyz@127.0.0.1:6379' })

  it('shows every setting in force with every secret masked', async () => {
    const admin = await signIn(mos.fetcher)
    const response = await admin.call('/admin/config')
    const text = await response.text()
    const hidden = [
      API_KEY,
      'second-secret-key-xyz',
      'admin-secret-key-xyz',
      'webhook-secret-xyz',
      'AKIASECRETXYZ',
      's3-secret-access-xyz',
      's3-session-token-xyz',
      's3-endpoint-password-xyz',
      'redis-password-xyz',
      'queue-password-xyz',
      'query-password-xyz',
      'ratelimit-password-xyz',
      licence.SERVICE__LICENSE__KEY,
      (await consolePasswordHash()).split('$')[5]!,
    ]
    for (const secret of hidden) expect(text, secret).not.toContain(secret)
    const settings = new Map(
      (JSON.parse(text) as { settings: { name: string; value: unknown; secret: boolean }[] }).settings.map((s) => [s.name, s]),
    )
    expect(settings.get('SERVICE__AUTH__API_KEYS')!.value).toEqual(['••••', '••••'])
    expect(settings.get('SERVICE__CONSOLE__ADMIN_PASSWORD_HASH')!.value).toBe('••••')
    expect(settings.get('SERVICE__LICENSE__KEY')!.value).toBe('••••')
    expect(settings.get('SERVICE__STORAGE__REDIS__URL')!.value).toBe('redis://••••@127.0.0.1:6379/0')
    expect(settings.get('SERVICE__STORAGE__S3__ENDPOINT')!.value).toBe('http://••••@127.0.0.1:9')
    expect(settings.get('SERVICE__SERVER__VARIANT')!.value).toBe('B')
    // Every setting is there, and every one declared secret is marked so.
    expect(settings.size).toBeGreaterThan(50)
    for (const name of ['SERVICE__AUTH__ADMIN_KEYS', 'SERVICE__WEBHOOKS__SECRET', 'SERVICE__STORAGE__S3__SECRET_ACCESS_KEY']) {
      const { secret, value } = settings.get(name)!
      expect([name, secret, [value].flat()]).toEqual([name, true, ['••••']])
    }
  })
})

describe.skipIf(!available)('the console’s administration of real tasks (in-process, variant A)', () => {
  const mos = useConsoleApp('A', throwAwayLicenceEnv())

  it('submits as console:admin, lists every owner’s tasks, follows one on /events, downloads, cancels and deletes another owner’s', async () => {
    const admin = await signIn(mos.fetcher)
    const submitted = await admin.call('/admin/submit/compress', { method: 'POST', body: await form({ engine: 'draco' }, [paths.box]) })
    expect(submitted.status).toBe(200)
    const { task_id: consoleTask } = (await submitted.json()) as { task_id: string }
    const events = await admin.call(`/events?task=${consoleTask}`)
    expect(events.headers.get('content-type')).toMatch(/^text\/event-stream/)
    const { match, raw } = await readEventsUntil(events, (event) => event.event === 'task' && JSON.parse(event.data).status === 'completed')
    expect(raw.startsWith('retry: 2000\n\n')).toBe(true)
    const finished = JSON.parse(match.data) as Record<string, unknown>
    expect(finished).toMatchObject({ task_id: consoleTask, owner: 'console:admin', options: { engine: 'draco', level: 7 } })

    // The API key's own task: invisible to the console's owner in the API, visible to the administrator.
    const apiSubmit = await mos.api('/api/v1/compress', { method: 'POST', body: await form({ engine: 'meshopt' }, [paths.duck]) })
    const { task_id: apiTask } = (await apiSubmit.json()) as { task_id: string }
    expect((await mos.api(`/api/v1/tasks/${consoleTask}`)).status).toBe(404)
    const listed = (await (await admin.call('/admin/tasks?limit=10')).json()) as { tasks: { task_id: string; owner: string }[] }
    expect(listed.tasks.map((task) => task.task_id)).toEqual([apiTask, consoleTask])
    expect(listed.tasks[0]!.owner).toMatch(/^[0-9a-f]{32}$/)
    const apiList = (await (await mos.api('/api/v1/tasks')).json()) as { tasks: { task_id: string }[] }
    expect(apiList.tasks.map((task) => task.task_id)).toEqual([apiTask])
    const completedOnly = (await (await admin.call('/admin/tasks?status=completed')).json()) as { tasks: { task_id: string }[] }
    expect(completedOnly.tasks.map((task) => task.task_id)).toContain(consoleTask)

    const download = await admin.call(`/admin/tasks/${consoleTask}/download`)
    expect(download.status).toBe(200)
    const bytes = new Uint8Array(await download.arrayBuffer())
    expect(new TextDecoder().decode(bytes.slice(0, 4))).toBe('glTF')
    expect(bytes.length).toBe((finished.output as { size_bytes: number }).size_bytes)
    expect(bytes.length).toBeLessThan((await readFile(paths.box)).length)

    // Cancelling or deleting another owner's task works for the administrator.
    const cancel = await admin.call(`/admin/tasks/${apiTask}/cancel`, { method: 'POST' })
    expect([200, 409]).toContain(cancel.status)
    const removed = await admin.call(`/admin/tasks/${apiTask}`, { method: 'DELETE' })
    expect(await removed.json()).toEqual({ task_id: apiTask, deleted: true })
    expect((await mos.api(`/api/v1/tasks/${apiTask}`)).status).toBe(404)
    expect((await admin.call(`/admin/tasks/${apiTask}`)).status).toBe(404)
  })

  it('hears every task change on /events, a deleted one as task-removed', async () => {
    const admin = await signIn(mos.fetcher)
    const events = await admin.call('/events')
    const submitted = await mos.api('/api/v1/compress', { method: 'POST', body: await form({ engine: 'meshopt' }, [paths.box]) })
    const { task_id } = (await submitted.json()) as { task_id: string }
    const { seen } = await readEventsUntil(events, (event) => event.data.includes(task_id) && JSON.parse(event.data).status === 'completed')
    expect(seen.filter((event) => event.data.includes(task_id)).every((event) => event.event === 'task')).toBe(true)
    const again = await admin.call('/events')
    await admin.call(`/admin/tasks/${task_id}`, { method: 'DELETE' })
    const { match } = await readEventsUntil(again, (event) => event.event === 'task-removed')
    expect(JSON.parse(match.data)).toEqual({ task_id })
    expect((await admin.call('/events?task=no-such-task')).status).toBe(404)
  })

  it('submits batches as the API does and reads any owner’s batch; reads queue, metrics, limits and licence', async () => {
    const admin = await signIn(mos.fetcher)
    const batch = await admin.call('/admin/submit/batch/compress', {
      method: 'POST',
      body: await form({ engine: 'meshopt' }, [paths.box, paths.duck], 'files'),
    })
    expect(batch.status).toBe(200)
    const { batch_id, total } = (await batch.json()) as { batch_id: string; total: number }
    expect(total).toBe(2)
    const apiBatch = await mos.api('/api/v1/batch/compress', {
      method: 'POST',
      body: await form({ engine: 'draco' }, [paths.box], 'files'),
    })
    const { batch_id: apiBatchId } = (await apiBatch.json()) as { batch_id: string }
    expect((await admin.call(`/admin/batches/${apiBatchId}`)).status).toBe(200)
    expect((await mos.api(`/api/v1/batch/${batch_id}`)).status).toBe(404)
    const byBatch = (await (await admin.call(`/admin/tasks?batch_id=${batch_id}`)).json()) as { tasks: { batch_id: string }[] }
    expect(byBatch.tasks.map((task) => task.batch_id)).toEqual([batch_id, batch_id])
    await until(
      async () => (await (await admin.call(`/admin/batches/${batch_id}`)).json()) as { status: string },
      (record) => record.status === 'completed',
      120_000,
      200,
    )

    const queue = (await (await admin.call('/admin/queue')).json()) as Record<string, unknown>
    expect(queue).toEqual({
      pending: expect.any(Number),
      processing: expect.any(Number),
      engine_threads: { busy: expect.any(Number), total: 2 },
    })
    const first = (await (await admin.call('/admin/metrics')).json()) as { requests_total: number; tasks: { completed: number } }
    const second = (await (await admin.call('/admin/metrics')).json()) as Record<string, unknown> & { requests_total: number }
    expect(second).toMatchObject({ time: expect.any(String), tasks: expect.any(Object), queue_length: expect.any(Number) })
    expect(second.requests_total).toBeGreaterThan(first.requests_total)
    expect(first.tasks.completed).toBeGreaterThanOrEqual(2)
    // One process with the local queue runs every task: its own totals are the deployment's.
    expect(second.tasks).toMatchObject({ scope: 'process' })
    expect(second.rss_mb).toBeGreaterThan(10)

    const limits = (await (await admin.call('/admin/limits')).json()) as { in_force: Record<string, unknown>; tier: { name: string } }
    expect(limits.tier.name).toBe('professional')
    expect(limits.in_force).toMatchObject({ max_file_size_mb: 500, license_status: 'active' })
    const licence = (await (await admin.call('/admin/license')).json()) as Record<string, unknown>
    expect(licence).toMatchObject({ mode: 'licensed', tier: 'professional' })
    const verify = await admin.call('/admin/license/verify', { method: 'POST', body: JSON.stringify({ license_key: 'MOS1-not-a-key' }) })
    expect(verify.status).toBe(200)
    expect(await verify.json()).toMatchObject({ valid: false, activated: false })
  })
})
