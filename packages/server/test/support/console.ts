import { hashPassword } from '../../src/console/password-hash.ts'

/** The console password of the tests' services. */
export const CONSOLE_PASSWORD = 'console-test-password-0123'

let hash: Promise<string> | undefined
/** Its scrypt hash, made once per test file (a real hash: ~0.1 s of scrypt). */
export const consolePasswordHash = () => (hash ??= hashPassword(CONSOLE_PASSWORD))

/** Sends a request to a service at `path` (in-process `app.fetch`, or a real server). */
export type Fetcher = (path: string, init?: RequestInit) => Promise<Response>

/** A signed-in console: the cookie header to send and the CSRF token of the session. */
export interface ConsoleClient {
  cookie: string
  csrf: string
  /** A request with the session cookie (and the CSRF token on state-changing methods). */
  call: Fetcher
}

/** Signs in with `password`; throws with the answer when refused. */
export async function signIn(fetcher: Fetcher, password = CONSOLE_PASSWORD): Promise<ConsoleClient> {
  const response = await fetcher('/auth/login', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ password }),
  })
  if (response.status !== 200) throw new Error(`sign-in refused: ${response.status} ${await response.text()}`)
  const cookie = response.headers.get('set-cookie')!.split(';')[0]!
  const { csrf_token } = (await response.json()) as { csrf_token: string }
  return {
    cookie,
    csrf: csrf_token,
    call: (path, init = {}) => {
      const headers = new Headers(init.headers)
      headers.set('cookie', cookie)
      if (init.method && !['GET', 'HEAD'].includes(init.method)) headers.set('x-csrf-token', csrf_token)
      return fetcher(path, { ...init, headers })
    },
  }
}

export interface ServerSentEvent {
  event: string
  data: string
}

/**
 * Reads server-sent events from `response` until `done` holds for one of them (answered), or the
 * stream ends or `timeoutMs` passes (throws, with the events seen). Cancels the stream after.
 */
export async function readEventsUntil(
  response: Response,
  done: (event: ServerSentEvent) => boolean,
  timeoutMs = 120_000,
): Promise<{ match: ServerSentEvent; seen: ServerSentEvent[]; raw: string }> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  const seen: ServerSentEvent[] = []
  let raw = ''
  let buffer = ''
  const timer = setTimeout(() => void reader.cancel(new Error('time-out')), timeoutMs)
  try {
    for (;;) {
      const { value, done: ended } = await reader.read()
      if (ended) throw new Error(`the event stream ended before the awaited event; saw:\n${raw}`)
      raw += value
      buffer += value
      let end = buffer.indexOf('\n\n')
      while (end >= 0) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        end = buffer.indexOf('\n\n')
        const lines = block.split('\n')
        const event = lines.find((line) => line.startsWith('event: '))?.slice(7)
        const data = lines.filter((line) => line.startsWith('data: ')).map((line) => line.slice(6))
        if (!event) continue
        const parsed = { event, data: data.join('\n') }
        seen.push(parsed)
        if (done(parsed)) return { match: parsed, seen, raw }
      }
    }
  } catch (error) {
    throw new Error(`${(error as Error).message}; saw:\n${raw}`)
  } finally {
    clearTimeout(timer)
    await reader.cancel().catch(() => undefined)
  }
}
