import { ERROR_TEXTS, EXTENSION_HEADERS, MAX_TASK_WAIT_SECONDS, TERMINAL_TASK_STATUSES, type TaskRecord } from '@mos/sdk/contract'
import type { H3Event } from 'h3'
import type { ServiceContext } from '../context.ts'
import { ApiError } from '../errors.ts'
import { toTaskRecord, type TaskState } from '../tasks/task-state.ts'
import { findTask } from './tasks.ts'

const WAIT_RULE = `a whole number of seconds from 0 to ${MAX_TASK_WAIT_SECONDS}`

/** The `?wait=` of a task read: undefined when absent, else 0–60 seconds (anything else is a 400). */
export function waitSeconds(event: H3Event): number | undefined {
  const raw = event.url.searchParams.get('wait')
  if (raw === null) return undefined
  const seconds = /^\d{1,2}$/.test(raw) ? Number(raw) : Number.NaN
  if (!(seconds <= MAX_TASK_WAIT_SECONDS)) throw new ApiError(400, ERROR_TEXTS.invalidField('wait', WAIT_RULE))
  return seconds
}

export const isFinished = (task: TaskState) => TERMINAL_TASK_STATUSES.includes(task.status)

/**
 * Follows a task's record: `onState` gets the record as it is now, then again after each change
 * (undefined once it is gone). Reads that changes arrive during are coalesced into one more read,
 * so a burst of progress writes costs at most two reads. Resolves with the function that stops it.
 */
export async function followTask(ctx: ServiceContext, id: string, onState: (task: TaskState | undefined) => void): Promise<() => void> {
  let reading = false
  let again = false
  let stopped = false
  const read = async () => {
    if (reading) return void (again = true)
    reading = true
    try {
      do {
        again = false
        // A failed read (storage away) skips this change; the next change or the deadline follows.
        const task = await ctx.processing.tasks.get(id).then(
          (found) => ({ found }),
          () => undefined,
        )
        if (task && !stopped) onState(task.found)
      } while (again && !stopped)
    } finally {
      reading = false
    }
  }
  const unlisten = await ctx.storage.taskEvents.listen(id, () => void read())
  void read()
  return () => {
    stopped = true
    unlisten()
  }
}

/**
 * GET /api/v1/tasks/{id}: the task record (2.1), 404 when unknown. With `?wait=<seconds>` (Mos
 * extension, the long poll) it answers as soon as the task is completed or failed, else with the
 * record as it is when the wait ends (or the client leaves, or the service stops). Every answer
 * says how long a wait may be (`Mos-Wait-Max`), which is how a client learns it may long poll.
 */
export async function readTaskRecord(ctx: ServiceContext, event: H3Event, id: string, owner: string): Promise<TaskRecord> {
  const seconds = waitSeconds(event)
  event.res.headers.set(EXTENSION_HEADERS.waitMax, String(MAX_TASK_WAIT_SECONDS))
  // Another key's task is not found, and is not waited on either.
  const now = await findTask(ctx, id, owner)
  const task = seconds && !isFinished(now) ? await awaitFinished(ctx, event, id, seconds) : now
  if (!task) throw new ApiError(404, ERROR_TEXTS.taskNotFound(id))
  return toTaskRecord(task, ctx.variant)
}

/** The task once finished, or as it is at the deadline. Woken by record writes (tasks/task-events.ts), never by a timer loop. */
async function awaitFinished(ctx: ServiceContext, event: H3Event, id: string, seconds: number): Promise<TaskState | undefined> {
  let latest: TaskState | undefined
  let read = false
  await new Promise<void>((resolve, reject) => {
    let done = false
    let unfollow: (() => void) | undefined
    const finish = () => {
      if (done) return
      done = true
      unfollow?.()
      clearTimeout(timer)
      stopOnClose()
      event.req.signal?.removeEventListener('abort', finish)
      resolve()
    }
    const timer = setTimeout(finish, seconds * 1000)
    const stopOnClose = ctx.storage.taskEvents.onClose(finish)
    event.req.signal?.addEventListener('abort', finish, { once: true })
    followTask(ctx, id, (state) => {
      latest = state
      read = true
      if (!state || isFinished(state)) finish()
    }).then((stop) => (done ? stop() : (unfollow = stop)), reject)
  })
  // Ended before the first read came back (the client left at once): read it now.
  return read ? latest : ctx.processing.tasks.get(id)
}
