import type { Storage } from 'unstorage'
import { randomToken, sha256Hex } from '../web-crypto.ts'

/** The one console user: the deployment's administrator. */
export const CONSOLE_USER = 'admin'

/** A signed-in console session, as stored (never the cookie's value: only its digest is the key). */
export interface ConsoleSession {
  user: typeof CONSOLE_USER
  csrf_token: string
  created_at: string
  expires_at: string
}

export interface ConsoleSessions {
  /** A new session: the cookie's value (256 random bits) and what is stored under its digest. */
  create(): Promise<{ cookie: string; session: ConsoleSession }>
  /** The live session of a cookie value; an expired one is removed and not returned. */
  find(cookie: string | undefined): Promise<ConsoleSession | undefined>
  remove(cookie: string): Promise<void>
  /** Calls `listener` with the cookie of every session this process removes (a sign-out), once it is gone from the store. */
  onRemove(listener: (cookie: string) => void): () => void
  /** Removes every expired session; answers how many (the maintenance sweep). */
  sweep(now?: number): Promise<number>
}

const PREFIX = 'console-sessions'
/** 32 bytes in base64url, as `create` makes them: anything else is not looked up at all. */
const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/

const sessionKey = async (cookie: string) => `${PREFIX}:${await sha256Hex(cookie)}`
const expired = (session: ConsoleSession, now: number) => !(Date.parse(session.expires_at) > now)

/**
 * Console sessions among the task records (unstorage: fs, Redis or S3), so every API process of a
 * cluster reads the same sessions and they outlive a restart. The key is a SHA-256 of the cookie:
 * whoever reads the store learns no cookie that would sign them in.
 */
export function createConsoleSessions(records: Storage, options: { sessionHours: number }): ConsoleSessions {
  const removeListeners = new Set<(cookie: string) => void>()
  return {
    async create() {
      const cookie = randomToken(32)
      const now = Date.now()
      const session: ConsoleSession = {
        user: CONSOLE_USER,
        csrf_token: randomToken(32),
        created_at: new Date(now).toISOString(),
        expires_at: new Date(now + Math.round(options.sessionHours * 3_600_000)).toISOString(),
      }
      await records.setItem(await sessionKey(cookie), session)
      return { cookie, session }
    },
    async find(cookie) {
      if (!cookie || !COOKIE_VALUE.test(cookie)) return undefined
      const key = await sessionKey(cookie)
      const session = await records.getItem<ConsoleSession>(key)
      if (!session || typeof session !== 'object') return undefined
      if (expired(session, Date.now())) {
        await records.removeItem(key).catch(() => undefined)
        return undefined
      }
      return session
    },
    async remove(cookie) {
      if (!COOKIE_VALUE.test(cookie)) return
      await records.removeItem(await sessionKey(cookie))
      for (const listener of removeListeners) listener(cookie)
    },
    onRemove(listener) {
      removeListeners.add(listener)
      return () => removeListeners.delete(listener)
    },
    async sweep(now = Date.now()) {
      let removed = 0
      for (const key of await records.getKeys(PREFIX)) {
        const session = await records.getItem<ConsoleSession>(key)
        if (session && typeof session === 'object' && !expired(session, now)) continue
        await records.removeItem(key)
        removed++
      }
      return removed
    },
  }
}
