import { EXTENSION_HEADERS, type Variant } from '@mos/sdk/contract'
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
}

export const WEBHOOK_SENDER_DEFAULTS = { maxWaitMs: 3_600_000, attemptTimeoutMs: 10_000 }

export interface WebhookSender {
  /** Delivers a finished task's record to its callback_url (if it has one), retrying in the background. */
  notify(task: TaskState): void
  /** Stops the retries still waiting. */
  close(): void
}

/**
 * Webhook deliveries (Mos extension): the finished task's record as JSON, POSTed to its
 * callback_url, signed (`Mos-Signature`) and named (`Mos-Event-Id`, the same on every attempt, for
 * de-duplication: delivery is at-least-once). Any 2xx ends it; anything else (another status, a
 * redirect, which is never followed, a time-out, a refused connection) is retried with exponential
 * backoff for `retryMs`. The URL is checked again before every attempt: a name that resolves to a
 * private address now is refused now. The answer's body is never read.
 */
export function createWebhookSender(options: WebhookSenderOptions): WebhookSender {
  const maxWaitMs = options.maxWaitMs ?? WEBHOOK_SENDER_DEFAULTS.maxWaitMs
  const attemptTimeoutMs = options.attemptTimeoutMs ?? WEBHOOK_SENDER_DEFAULTS.attemptTimeoutMs
  const timers = new Set<ReturnType<typeof setTimeout>>()
  let closed = false

  async function attempt(url: string, body: string, eventId: string): Promise<string | undefined> {
    const problem = await callbackUrlProblem(url, { allowPrivate: options.allowPrivate })
    if (problem) return `callback_url refused: ${problem}`
    try {
      const response = await fetch(url, {
        method: 'POST',
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(attemptTimeoutMs),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'mos-webhooks',
          [EXTENSION_HEADERS.signature]: signatureHeader(body, options.secret),
          [EXTENSION_HEADERS.eventId]: eventId,
        },
      })
      await response.body?.cancel().catch(() => undefined)
      return response.status >= 200 && response.status < 300 ? undefined : `answered ${response.status}`
    } catch (error) {
      return error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error)
    }
  }

  function deliver(task: TaskState, url: string, body: string, eventId: string, giveUpAt: number, waitMs: number): void {
    void attempt(url, body, eventId).then((failure) => {
      const fields = { taskId: task.task_id, eventId }
      if (!failure) return options.logger.info(fields, 'webhook delivered')
      if (closed || Date.now() + waitMs > giveUpAt) return options.logger.warn({ ...fields, reason: failure }, 'webhook dropped')
      options.logger.warn({ ...fields, reason: failure, retryInMs: waitMs }, 'webhook delivery failed')
      const timer = setTimeout(() => {
        timers.delete(timer)
        deliver(task, url, body, eventId, giveUpAt, Math.min(waitMs * 2, maxWaitMs))
      }, waitMs)
      timer.unref()
      timers.add(timer)
    })
  }

  return {
    notify(task) {
      const url = task.job.callbackUrl
      if (!url || closed) return
      const body = JSON.stringify(toTaskRecord(task, options.variant))
      deliver(task, url, body, `${task.task_id}.${task.status}`, Date.now() + options.retryMs, options.firstWaitMs)
    },
    close() {
      closed = true
      for (const timer of timers) clearTimeout(timer)
      timers.clear()
    },
  }
}
