import { afterEach, describe, expect, it } from 'vitest'
import type { TaskHandler, TaskQueue } from '../../src/queue/task-queue.ts'
import { sleep, until } from '../../../../test/support/poll.ts'

export interface QueueSuiteOptions {
  /** A queue consuming with `handler` at `concurrency`; several calls share one backlog when the backend is shared. */
  create(handler: TaskHandler, concurrency: number): Promise<TaskQueue> | TaskQueue
  /** Whether two queues from `create` share their tasks (separate processes in production). */
  shared: boolean
  cleanup?(): Promise<void>
}

async function untilTrue(check: () => boolean, timeoutMs = 20_000, what = 'condition'): Promise<void> {
  if (!(await until(check, Boolean, timeoutMs, 20))) throw new Error(`timed out waiting for ${what}`)
}

/** A handler that records each run and holds it until released. */
function recorder(holdMs = 0) {
  const runs: string[] = []
  const finished: string[] = []
  let inFlight = 0
  let most = 0
  const handler: TaskHandler = async (id, options) => {
    runs.push(id)
    most = Math.max(most, ++inFlight)
    try {
      const deadline = Date.now() + holdMs
      while (Date.now() < deadline && !options?.signal?.aborted) await sleep(10)
      if (!options?.signal?.aborted) finished.push(id)
    } finally {
      inFlight--
    }
  }
  return {
    handler,
    runs,
    finished,
    get most() {
      return most
    },
    get inFlight() {
      return inFlight
    },
  }
}

/**
 * One behaviour for every queue backend: every task runs, once, within the concurrency; queuing a
 * task twice runs it once; closing drains; with a shared backend, consumers share the backlog and
 * a task handed back by a stopping consumer runs on another.
 */
export function describeQueue(name: string, options: QueueSuiteOptions): void {
  describe(`queue: ${name}`, () => {
    const open: TaskQueue[] = []
    const make = async (handler: TaskHandler, concurrency: number) => {
      const queue = await options.create(handler, concurrency)
      open.push(queue)
      return queue
    }
    afterEach(async () => {
      await Promise.allSettled(open.splice(0).map((queue) => queue.close({ drain: false })))
      await options.cleanup?.()
    })

    it('runs every task once, never more at a time than the concurrency', async () => {
      const r = recorder(30)
      const queue = await make(r.handler, 3)
      const ids = Array.from({ length: 20 }, (_, i) => `run-once-${i}`)
      for (const id of ids) await queue.enqueue(id)
      await untilTrue(() => r.finished.length === ids.length, 20_000, 'all tasks')
      expect([...r.runs].sort()).toEqual([...ids].sort())
      expect(r.most).toBeLessThanOrEqual(3)
      expect(r.most).toBeGreaterThan(1)
    })

    it('runs a task queued twice only once', async () => {
      const r = recorder(300)
      const queue = await make(r.handler, 1)
      await queue.enqueue('twice-a')
      await queue.enqueue('twice-b')
      await queue.enqueue('twice-b')
      await queue.enqueue('twice-a')
      await untilTrue(() => r.finished.length === 2, 20_000, 'both tasks')
      await sleep(300)
      expect([...r.runs].sort()).toEqual(['twice-a', 'twice-b'])
    })

    it('drains on close: running tasks finish, nothing new starts', async () => {
      const r = recorder(400)
      const queue = await make(r.handler, 1)
      await queue.enqueue('drain-1')
      await queue.enqueue('drain-2')
      await untilTrue(() => r.runs.length === 1, 20_000, 'first start')
      await queue.close({ drain: true })
      expect(r.finished).toEqual(['drain-1'])
      await sleep(300)
      expect(r.runs).toEqual(['drain-1'])
    })

    it.runIf(options.shared)('shares the backlog between consumers: each task runs once', async () => {
      const a = recorder(20)
      const b = recorder(20)
      const first = await make(a.handler, 2)
      await make(b.handler, 2)
      const ids = Array.from({ length: 40 }, (_, i) => `shared-${i}`)
      await Promise.all(ids.map((id) => first.enqueue(id)))
      await untilTrue(() => a.finished.length + b.finished.length === ids.length, 30_000, 'all tasks')
      await sleep(200)
      expect([...a.runs, ...b.runs].sort()).toEqual([...ids].sort())
      expect(a.runs.length).toBeGreaterThan(0)
      expect(b.runs.length).toBeGreaterThan(0)
    })

    it.runIf(options.shared)('hands a running task back when closed without drain; another consumer runs it', async () => {
      const a = recorder(60_000)
      const first = await make(a.handler, 1)
      await first.enqueue('handed-back')
      await untilTrue(() => a.runs.length === 1, 20_000, 'first start')
      const started = Date.now()
      await first.close({ drain: false })
      expect(a.finished).toEqual([])

      const b = recorder(10)
      await make(b.handler, 1)
      await untilTrue(() => b.finished.length === 1, 20_000, 'the second consumer')
      expect(b.finished).toEqual(['handed-back'])
      // Handed back at once, not after the lock ran out.
      expect(Date.now() - started).toBeLessThan(10_000)
    })
  })
}
