import { EXTENSION_HEADERS, type Variant } from '@mos/sdk/contract'
import type { Storage } from 'unstorage'
import type { Logger } from '../logging/create-logger.ts'
import { toTaskRecord, type TaskState } from '../tasks/task-state.ts'
import { callbackUrlProblem } from './callback-url.ts'
import { signatureHeader } from './sign.ts'

export interface WebhookSenderOptions {
  secret: string
  allowPrivate: boolean
  variant: Variant
  /** How long a failing delivery is retried (ms). */
  retryMs: number
  /** The first wait between two attempts (ms); each next one doubles, up to `maxWaitMs`. */
  firstWaitMs: number
  maxWaitMs?: number
  /** Time limit of one attempt, connection to answer (ms). */
  attemptTimeoutMs?: number
  logger: Logger
  /** Where deliveries wait between attempts (the records store), so a restart resumes them. */
  outbox: Storage
}

export const WEBHOOK_SENDER_DEFAULTS = { maxWaitMs: 3_600_000, attemptTimeoutMs: 10_000 }

export interface WebhookSender {
  /** Delivers a finished task's record to its callback_url (if it has one), retrying in the background. */
  notify(task: TaskState): void
  /** Resumes the deliveries a stopped process left in the outbox (at start-up); resolves with how many. */
  recover(): Promise<number>
  /** Stops the retries still waiting. */
  close(): void
}

/** A delivery waiting in the outbox (`webhooks:<event id>` among the records). */
interface OutboxEntry {
  eventId: string
  taskId: string
  url: string
  /** The record as first sent: every attempt carries the same bytes. */
  body: string
  giveUpAt: number
  /** When the next attempt is due, and the wait after it should fail (ms). */
  nextAt: number
  waitMs: number
}

/**
 * Webhook deliveries (Mos extension): the finished task's record as JSON, POSTed to its
 * callback_url, signed (`Mos-Signature`) and named (`Mos-Event-Id`, the same on every attempt, for
 * de-duplication: delivery is at-least-once). Any 2xx ends it; anything else (another status, a
 * redirect, which is never followed, a time-out, a refused connection) is retried with exponential
 * backoff for `retryMs`. Each delivery waits in an outbox among the records (`webhooks:<event id>`)
 * until it ends, so deliveries survive a restart (`recover`). The URL is checked again before every attempt: a name that resolves to a
 * private address now is refused now. The answer's body is never read.
 */
export function createWebhookSender(options: WebhookSenderOptions): WebhookSender {
  const maxWaitMs = options.maxWaitMs ?? WEBHOOK_SENDER_DEFAULTS.maxWaitMs
  const attemptTimeoutMs = options.attemptTimeoutMs ?? WEBHOOK_SENDER_DEFAULTS.attemptTimeoutMs
  const timers = new Set<ReturnType<typeof setTimeout>>()
  let closed = false

  /** One delivery: persisted before each wait, removed once it ends (delivered or dropped). */
  function deliver(entry: OutboxEntry): void {
    void attemptDelivery(entry, options.allowPrivate, options.secret, attemptTimeoutMs).then(async (failure) => {
      const fields = { taskId: entry.taskId, eventId: entry.eventId }
      if (!failure || Date.now() + entry.waitMs > entry.giveUpAt) {
        await options.outbox.removeItem(itemKey(entry.eventId)).catch(() => undefined)
        if (!failure) return options.logger.info(fields, 'webhook delivered')
        return options.logger.warn({ ...fields, reason: failure }, 'webhook dropped: retried for the whole retry period')
      }
      if (closed) return
      options.logger.warn({ ...fields, reason: failure, retryInMs: entry.waitMs }, 'webhook delivery failed')
      const next = { ...entry, nextAt: Date.now() + entry.waitMs, waitMs: Math.min(entry.waitMs * 2, maxWaitMs) }
      await options.outbox.setItem(itemKey(entry.eventId), next).catch(() => undefined)
      schedule(next)
    })
  }

  function schedule(entry: OutboxEntry): void {
    const timer = setTimeout(
      () => {
        timers.delete(timer)
        deliver(entry)
      },
      Math.max(0, entry.nextAt - Date.now()),
    )
    timer.unref()
    timers.add(timer)
  }

  return {
    notify(task) {
      const entry = outboxEntry(task, options)
      if (!entry || closed) return
      // In the outbox before the first attempt: a process killed during it leaves the delivery to the next start.
      void options.outbox.setItem(itemKey(entry.eventId), entry).then(
        () => deliver(entry),
        () => deliver(entry),
      )
    },
    async recover() {
      const keys = await options.outbox.getKeys('webhooks')
      const entries = await Promise.all(keys.map((key) => options.outbox.getItem<OutboxEntry>(key)))
      for (const entry of entries) if (entry && typeof entry === 'object' && typeof entry.url === 'string') schedule(entry)
      return entries.length
    },
    close() {
      closed = true
      for (const timer of timers) clearTimeout(timer)
      timers.clear()
    },
  }
}

/** Where a delivery waits among the records. */
const itemKey = (eventId: string) => `webhooks:${eventId}`

/** A finished task's delivery, due now, or undefined when the task has no callback_url. */
function outboxEntry(task: TaskState, options: Pick<WebhookSenderOptions, 'variant' | 'retryMs' | 'firstWaitMs'>): OutboxEntry | undefined {
  const url = task.job.callbackUrl
  if (!url) return undefined
  const now = Date.now()
  return {
    eventId: `${task.task_id}.${task.status}`,
    taskId: task.task_id,
    url,
    body: JSON.stringify(toTaskRecord(task, options.variant)),
    giveUpAt: now + options.retryMs,
    nextAt: now,
    waitMs: options.firstWaitMs,
  }
}

/** One signed POST of the delivery; resolves to why it failed, or undefined once answered 2xx. */
async function attemptDelivery(
  { url, body, eventId }: OutboxEntry,
  allowPrivate: boolean,
  secret: string,
  timeoutMs: number,
): Promise<string | undefined> {
  const problem = await callbackUrlProblem(url, { allowPrivate })
  if (problem) return `callback_url refused: ${problem}`
  try {
    const response = await fetch(url, {
      method: 'POST',
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
      headers: {
        'content-type': 'application/json',
        'user-agent': 'mos-webhooks',
        [EXTENSION_HEADERS.signature]: signatureHeader(body, secret),
        [EXTENSION_HEADERS.eventId]: eventId,
      },
    })
    await response.body?.cancel().catch(() => undefined)
    return response.status >= 200 && response.status < 300 ? undefined : `answered ${response.status}`
  } catch (error) {
    return error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error)
  }
}
