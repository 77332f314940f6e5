import type { H3Event } from 'h3'
import type { ServiceContext } from '../context.ts'
import { createEventWriter, type EventWriter, eventStreamResponse, holdEventStream } from '../routes/event-stream.ts'
import { findTask } from '../routes/tasks.ts'
import { ALL_OWNERS } from '../tasks/task-owner.ts'
import type { TaskState } from '../tasks/task-state.ts'
import { adminTaskView } from './admin-views.ts'

/** A comment this often keeps the stream open through proxies that cut idle connections (nginx: 60 s). */
const PING_MS = 15_000
/** How soon a browser reconnects after the stream drops (EventSource's `retry`). */
const RETRY_MS = 2000
/**
 * Events a client may fall behind by before its stream is ended (it reconnects and reads the list
 * again): a stalled reader must not make the service hold every change for it.
 */
const MAX_BACKLOG = 1000

/** Watches the stream's session: calls `onEnded` once it has ended, answers the function that stops watching. */
export type SessionWatch = (onEnded: () => void) => () => void

/**
 * GET /events: `event: task` with the task's admin view whenever any task's record changes, in any
 * process of the cluster (the service's task events: an emitter, or Redis pub/sub with BullMQ);
 * `event: task-removed` with `{"task_id"}` once a record is gone. `?task=<id>` keeps one task's
 * events, and starts with its record as it is now (404 when it does not exist). Changes that
 * arrive while a task is being read are coalesced into one more read of it. The stream ends when
 * the session that opened it does (`session`).
 */
export async function streamConsoleEvents(ctx: ServiceContext, event: H3Event, session: SessionWatch): Promise<Response> {
  const only = event.url.searchParams.get('task') || undefined
  if (only) await findTask(ctx, only, ALL_OWNERS)
  let stop: () => void = () => undefined
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      const writer = createEventWriter(controller, () => stop(), MAX_BACKLOG)
      const changed = createChangedTaskReader(ctx, writer)
      const hold = holdEventStream(writer, ctx.storage.taskEvents, { everyMs: PING_MS, line: ': ping\n\n' })
      // The session was checked when the stream opened; once it ends (signed out here or on another tab or process,
      // expired) the stream ends too, and the browser's reconnect meets a 401: every owner's tasks go to no one signed out.
      const unwatch = session(writer.end)
      stop = () => {
        unwatch()
        hold.stop()
      }
      writer.send(`retry: ${RETRY_MS}\n\n`)
      const listening = await ctx.storage.taskEvents
        .listenAll((id) => {
          if (!only || id === only) changed(id)
        })
        .catch(() => undefined)
      // Task events that cannot be listened to (Redis away) end the stream; the browser reconnects.
      // Read once listening, so a change written between the 404 check and now is not missed.
      if (hold.attach(listening) && only) changed(only)
    },
    cancel: () => stop(),
  })
  return eventStreamResponse(body)
}

/**
 * Marks a task changed: its record is read and sent as `task` (or `task-removed` once gone). Changes
 * that arrive while a read is under way are coalesced into one more read of each task.
 */
function createChangedTaskReader(ctx: ServiceContext, writer: EventWriter): (id: string) => void {
  const sendTask = (id: string, task: TaskState | undefined) =>
    writer.send(
      task
        ? `event: task\ndata: ${JSON.stringify(adminTaskView(ctx, task))}\n\n`
        : `event: task-removed\ndata: ${JSON.stringify({ task_id: id })}\n\n`,
    )
  const dirty = new Set<string>()
  let reading = false
  const readDirty = async () => {
    if (reading) return
    reading = true
    try {
      while (dirty.size > 0 && !writer.ended) {
        const ids = [...dirty]
        dirty.clear()
        // A failed read (storage away) skips this change; the next change reads the record again.
        const tasks = await Promise.all(ids.map((id) => ctx.processing.tasks.get(id).catch(() => null)))
        ids.forEach((id, at) => {
          if (tasks[at] !== null) sendTask(id, tasks[at])
        })
      }
    } finally {
      reading = false
    }
  }
  return (id) => {
    dirty.add(id)
    void readDirty()
  }
}
