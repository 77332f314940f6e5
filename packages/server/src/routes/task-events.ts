import type { TaskRecord } from '@mos/sdk/contract'
import type { ServiceContext } from '../context.ts'
import { findTask } from './tasks.ts'
import { toTaskRecord, type TaskState } from '../tasks/task-state.ts'
import { createEventWriter, eventStreamResponse, holdEventStream } from './event-stream.ts'
import { followTask, isFinished } from './task-wait.ts'

/**
 * A comment line this often keeps the stream alive through proxies that cut idle connections
 * (nginx's proxy_read_timeout is 60 s by default) and lets a client notice a dead connection.
 */
const HEARTBEAT_MS = 15_000

/** The event of a record: `progress` while pending or processing, then `completed` or `failed`. */
const eventName = (record: TaskRecord) => (record.status === 'completed' || record.status === 'failed' ? record.status : 'progress')

/** One server-sent event carrying the record as JSON (JSON has no raw newline, so one data line). */
const sseEvent = (record: TaskRecord) => `event: ${eventName(record)}\ndata: ${JSON.stringify(record)}\n\n`

/**
 * GET /api/v1/tasks/{id}/events (Mos extension): server-sent events of the task's progress, one per
 * change of its status or progress, woken by record writes like the long poll; the stream ends
 * after the `completed` or `failed` event (also when the service stops or the record is removed).
 * 404 before the stream starts when the task is unknown. The whole stream is one request against
 * the rate limit.
 */
export async function streamTaskEvents(ctx: ServiceContext, id: string, owner: string, bodyless = false): Promise<Response> {
  // 404 for an unknown task and for another key's.
  const first = await findTask(ctx, id, owner)
  // A HEAD: the stream's headers, and nothing listening for a body never read.
  if (bodyless) return eventStreamResponse(null)
  let stop: () => void = () => undefined
  let cancelled = false
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      const writer = createEventWriter(controller, () => stop())
      let sent = ''
      const send = (task: TaskState | undefined) => {
        if (writer.ended) return
        if (!task) return writer.end()
        const record = toTaskRecord(task, ctx.variant)
        const fingerprint = `${record.status}:${'progress' in record ? record.progress : ''}`
        if (fingerprint !== sent) writer.send(sseEvent(record))
        sent = fingerprint
        if (isFinished(task)) writer.end()
      }
      const hold = holdEventStream(writer, ctx.storage.taskEvents, { everyMs: HEARTBEAT_MS, line: ': heartbeat\n\n' })
      stop = hold.stop
      send(first)
      if (writer.ended) return
      // Storage that cannot be listened to (Redis away) ends the stream; the client reads the record.
      const listening = await followTask(ctx, id, send).catch(() => undefined)
      // Cancelled while the listener was being set up: let it go at once, else nothing ever would.
      if (cancelled) return listening?.()
      hold.attach(listening)
    },
    // The client went away: stop listening.
    cancel: () => {
      cancelled = true
      stop()
    },
  })
  return eventStreamResponse(body)
}
