import { ERROR_TEXTS } from '@mos/sdk/contract'
import type { H3Event } from 'h3'
import { ConfigError } from '../config/load.ts'
import type { Config } from '../config/schema.ts'
import { ApiError } from '../errors.ts'
import { createAuthThrottle } from '../limits/auth-throttle.ts'
import { requestFacts } from '../logging/request-log.ts'
import { readJsonText } from '../uploads/read-json-body.ts'
import { equalInConstantTime } from '../web-crypto.ts'
import type { ConsoleSession, ConsoleSessions } from './console-sessions.ts'
import { parsePasswordHash, verifyPassword, type ScryptHash } from './password-hash.ts'

export const SESSION_COOKIE = 'mos_session'
export const CSRF_HEADER = 'X-CSRF-Token'
/** A password is a line of text: the body is bounded at a few KB, read or declared. */
const LOGIN_BODY_BYTES = 8 * 1024

export const CONSOLE_TEXTS = {
  notSignedIn: 'not signed in',
  wrongPassword: 'wrong password',
  noSignIn: 'the console has no sign-in configured: set SERVICE__CONSOLE__ADMIN_PASSWORD_HASH',
  csrf: `missing or wrong ${CSRF_HEADER} header: send the csrf_token of GET /auth/me`,
  origin: (origin: string) => `cross-origin request refused: Origin ${origin} is not this console's`,
} as const

/** What a console request signed in with: its session and the cookie that named it. */
export interface SignedIn {
  session: ConsoleSession
  cookie: string
}

export interface ConsoleAuth {
  /** POST /auth/login: the session's cookie set, or 401/429/503. */
  login(event: H3Event): Promise<{ user: string; csrf_token: string; expires_at: string }>
  /** POST /auth/logout: the session removed and the cookie cleared (204). */
  logout(event: H3Event): Promise<Response>
  /** GET /auth/me. */
  me(event: H3Event): Promise<{ user: string; csrf_token: string; expires_at: string }>
  /**
   * GET /auth/session: /auth/me's answer with `signed_in: true`, or 200 `{"signed_in": false}` where /auth/me answers
   * 401. A page asking at load whether it is signed in expects "no" as often as "yes", and a browser logs every 4xx
   * as an error in its console: the sign-in page opened with one. /auth/me keeps its 401 for the SDK and probes.
   */
  session(event: H3Event): Promise<{ signed_in: false } | { signed_in: true; user: string; csrf_token: string; expires_at: string }>
  /**
   * The session of a console request, or 401; for a state-changing method also the CSRF token and
   * the Origin (403). Never reads X-API-Key: an API key opens nothing here.
   */
  requireSession(event: H3Event): Promise<SignedIn>
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])
const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i

/** The session cookie's value from the Cookie header (the last one of that name, as browsers send the most specific last). */
function sessionCookie(event: H3Event): string | undefined {
  const header = event.req.headers.get('cookie')
  if (!header) return undefined
  let value: string | undefined
  for (const part of header.split(';')) {
    const at = part.indexOf('=')
    if (at > 0 && part.slice(0, at).trim() === SESSION_COOKIE) value = part.slice(at + 1).trim()
  }
  return value
}

/**
 * Whether `Origin`, when a browser sends it, is the request's own: compared by host and port, since
 * a TLS-terminating proxy in front makes the request's own scheme http while the page's is https.
 * `Origin: null` (sandboxed frames, some redirects) is never this console's.
 */
function assertSameOrigin(event: H3Event): void {
  const origin = event.req.headers.get('origin')
  if (origin === null) return
  let host: string | undefined
  try {
    host = new URL(origin).host
  } catch {
    host = undefined
  }
  if (host === undefined || host !== event.url.host) throw new ApiError(403, CONSOLE_TEXTS.origin(origin))
}

function sameToken(sent: string | null, expected: string): boolean {
  if (!sent) return false
  const encoder = new TextEncoder()
  return equalInConstantTime(encoder.encode(sent), encoder.encode(expected))
}

/** Reads `{"password": "…"}`; 400 naming the problem otherwise. */
async function readPassword(event: H3Event, idleMs: number): Promise<string> {
  const text = await readJsonText(event, LOGIN_BODY_BYTES, idleMs)
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch (error) {
    throw new ApiError(400, ERROR_TEXTS.malformedBody(`body is not JSON (${(error as Error).message})`))
  }
  const password = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).password : undefined
  if (password !== undefined && typeof password !== 'string')
    throw new ApiError(400, ERROR_TEXTS.invalidField('password', 'must be a string'))
  if (!password) throw new ApiError(400, ERROR_TEXTS.missingField('password'))
  return password
}

/** The administrator's scrypt hash; undefined when none is set, a `ConfigError` when it is malformed. */
function adminPasswordHash(configured: string): ScryptHash | undefined {
  if (!configured) return undefined
  const hash = parsePasswordHash(configured)
  if (!hash)
    throw new ConfigError('SERVICE__CONSOLE__ADMIN_PASSWORD_HASH: expected scrypt$N$r$p$salt$hash as `npm run console-password` prints it')
  return hash
}

/** The Set-Cookie value of the session cookie: Secure unless configured off or served on loopback. */
function sessionSetCookie(settings: Config['console'], event: H3Event, value: string, maxAgeSeconds: number): string {
  const secure = settings.cookieSecure === 'true' || (settings.cookieSecure === 'auto' && !LOOPBACK.test(event.url.hostname))
  return [
    `${SESSION_COOKIE}=${value}`,
    'HttpOnly',
    'SameSite=Strict',
    'Path=/',
    `Max-Age=${maxAgeSeconds}`,
    ...(secure ? ['Secure'] : []),
  ].join('; ')
}

function sessionView(session: ConsoleSession) {
  return { user: session.user, csrf_token: session.csrf_token, expires_at: session.expires_at }
}

/** The session the request's cookie names, or 401. */
async function currentSession(sessions: ConsoleSessions, event: H3Event): Promise<SignedIn> {
  const value = sessionCookie(event)
  const session = await sessions.find(value)
  if (!session || !value) throw new ApiError(401, CONSOLE_TEXTS.notSignedIn)
  return { session, cookie: value }
}

/** `ConsoleAuth.requireSession`: the session, and for a state-changing method the Origin and CSRF token. */
async function requireSessionOf(sessions: ConsoleSessions, event: H3Event): Promise<SignedIn> {
  const signedIn = await currentSession(sessions, event)
  if (!SAFE_METHODS.has(event.req.method)) {
    assertSameOrigin(event)
    if (!sameToken(event.req.headers.get(CSRF_HEADER), signedIn.session.csrf_token)) throw new ApiError(403, CONSOLE_TEXTS.csrf)
  }
  return signedIn
}

/**
 * The console's sign-in: one administrator, whose scrypt hash is SERVICE__CONSOLE__ADMIN_PASSWORD_HASH.
 * A malformed hash stops start-up (ConfigError); an empty one leaves sign-in answering 503.
 */
export function createConsoleAuth(config: Pick<Config, 'console' | 'server' | 'rateLimit'>, sessions: ConsoleSessions): ConsoleAuth {
  const hash = adminPasswordHash(config.console.adminPasswordHash)
  const failures = createAuthThrottle({
    failuresPerMinute: config.server.authFailuresPerMinute,
    windowSeconds: config.rateLimit.windowSeconds,
  })
  const requireSession = (event: H3Event) => requireSessionOf(sessions, event)

  return {
    async login(event) {
      // A sign-in from another site's page would sign the browser into this console (login CSRF).
      assertSameOrigin(event)
      if (!hash) {
        requestFacts(event).setupState = true
        throw new ApiError(503, CONSOLE_TEXTS.noSignIn)
      }
      const throttled = await failures.throttled(event)
      if (throttled) throw throttled
      const password = await readPassword(event, config.server.bodyIdleTimeoutMs)
      if (!(await verifyPassword(password, hash))) throw await failures.refuse(event, new ApiError(401, CONSOLE_TEXTS.wrongPassword))
      const created = await sessions.create()
      const seconds = Math.max(1, Math.floor((Date.parse(created.session.expires_at) - Date.now()) / 1000))
      event.res.headers.append('set-cookie', sessionSetCookie(config.console, event, created.cookie, seconds))
      event.res.headers.set('cache-control', 'no-store')
      return sessionView(created.session)
    },
    async logout(event) {
      const signedIn = await requireSession(event)
      await sessions.remove(signedIn.cookie)
      const headers = { 'set-cookie': sessionSetCookie(config.console, event, '', 0), 'cache-control': 'no-store' }
      return new Response(null, { status: 204, headers })
    },
    async me(event) {
      event.res.headers.set('cache-control', 'no-store')
      return sessionView((await currentSession(sessions, event)).session)
    },
    async session(event) {
      event.res.headers.set('cache-control', 'no-store')
      const session = await sessions.find(sessionCookie(event))
      return session ? { signed_in: true as const, ...sessionView(session) } : { signed_in: false as const }
    },
    requireSession,
  }
}
