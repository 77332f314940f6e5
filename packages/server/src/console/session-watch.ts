import type { ConsoleSessions } from './console-sessions.ts'

/**
 * How often a long-lived console request (the event stream) reads its session again: a sign-out on
 * another API process of a cluster, a session removed from the store or one that expired ends it
 * within this. A sign-out on this process ends it at once.
 */
export const SESSION_CHECK_MS = 5000

/**
 * Calls `onEnded` once the session the `cookie` names has ended, so what it opened (the event stream)
 * stops serving a browser that is no longer signed in: the session was checked when the stream
 * opened, and a stream lives for hours. Answers the function that stops watching. A read that fails
 * (the store away) ends nothing: the next check decides.
 */
export function watchSession(sessions: ConsoleSessions, cookie: string, onEnded: () => void, everyMs = SESSION_CHECK_MS): () => void {
  let watching = true
  const end = () => {
    if (!watching) return
    stop()
    onEnded()
  }
  const stopOnRemove = sessions.onRemove((removed) => {
    if (removed === cookie) end()
  })
  const timer = setInterval(() => {
    sessions.find(cookie).then(
      (session) => session || end(),
      () => undefined,
    )
  }, everyMs)
  const stop = () => {
    watching = false
    clearInterval(timer)
    stopOnRemove()
  }
  return stop
}
