import { RequestError, request } from '../api.ts'
import { hasEnded } from '../task-state.ts'
import type { TaskRecord } from '../types.ts'
import { ShownRecords } from './record-order.ts'

type Listener = (record: TaskRecord) => void
type RemovedListener = (taskId: string) => void
type ReachabilityListener = (reachable: boolean) => void

/**
 * What is read, while the stream is down and no task is open, to learn whether the service answers:
 * the cheapest console endpoint, and one whose 401 means nothing more than "not signed in".
 */
const PROBE_PATH = '/auth/me'

/** How often the tasks still open are read while the stream is down. */
const POLL_MS = 3000
/**
 * How often they are read while it is up: a change the stream did not carry (one that happened
 * before the page knew the task's id, or a read the service skipped) still reaches the page.
 */
const CHECK_MS = 10_000

/**
 * One `/events` stream for the whole page: every task record change arrives as an `event: task`.
 * EventSource reconnects by itself (the service sends `retry`); while it is down, the tasks still
 * open are read every few seconds instead, so progress never stops moving because a proxy cut the
 * stream. A record older than one already delivered is dropped (`isOlder`).
 *
 * Those reads also tell whether the service can be reached at all (`onReachability`): a read the
 * network refuses means it cannot, any answer (even an error) or the stream opening means it can. The
 * stream's own errors do not count alone: a proxy that cuts an idle stream is no outage.
 */
export class TaskEvents {
  private source: EventSource | undefined
  private readonly listeners = new Set<Listener>()
  private readonly removedListeners = new Set<RemovedListener>()
  private readonly watched = new Set<string>()
  /**
   * Tasks the page watched that have ended: not read on a timer (they will not change), but read again each
   * time the stream opens, since a deletion while it was down (in Admin, through the API, by the retention
   * sweep, on any process, or their data lost with a restart) sends no event the page could still hear.
   */
  private readonly ended = new Set<string>()
  /** The newest record delivered per task this page watched, its end included (a late read must not undo it). */
  private readonly shown = new ShownRecords()
  private readonly reachabilityListeners = new Set<ReachabilityListener>()
  private poller: ReturnType<typeof setInterval> | undefined
  private connected = false
  private reachable = true

  constructor(private readonly path = '/events') {}

  /** Calls `listener` with every task record that changes, and `removed` with the id of every record removed. */
  subscribe(listener: Listener, removed?: RemovedListener): () => void {
    this.listeners.add(listener)
    if (removed) this.removedListeners.add(removed)
    this.open()
    return () => {
      this.listeners.delete(listener)
      if (removed) this.removedListeners.delete(removed)
      if (this.listeners.size === 0) this.close()
    }
  }

  /** Calls `listener` whenever the service turns unreachable (network errors) or reachable again. */
  onReachability(listener: ReachabilityListener): () => void {
    this.reachabilityListeners.add(listener)
    return () => this.reachabilityListeners.delete(listener)
  }

  /** A task the page waits for: read once now (its first events may have passed before the stream saw it). */
  watch(taskId: string): void {
    this.watched.add(taskId)
    void this.read(taskId)
  }

  /**
   * Reads a task now, open or ended: after the page acted on it (a cancel, refused or not, a delete refused), the card
   * shows the service's word at once, whether the stream carries the change or is down.
   */
  refresh(taskId: string): Promise<void> {
    return this.read(taskId)
  }

  private open(): void {
    if (this.source) return
    this.source = new EventSource(this.path, { withCredentials: true })
    this.source.addEventListener('open', () => {
      this.connected = true
      this.setReachable(true)
      // Whatever changed while the stream was down: read the open tasks once, and the ended ones (removed meanwhile?).
      for (const id of [...this.watched, ...this.ended]) void this.read(id)
    })
    this.source.addEventListener('error', () => {
      this.connected = false
    })
    this.source.addEventListener('task', (event) => {
      try {
        this.deliver(JSON.parse((event as MessageEvent<string>).data) as TaskRecord)
      } catch {
        // A malformed event changes nothing on the page.
      }
    })
    this.source.addEventListener('task-removed', (event) => {
      try {
        const { task_id } = JSON.parse((event as MessageEvent<string>).data) as { task_id: string }
        this.removed(task_id)
      } catch {
        // As above.
      }
    })
    let lastRead = Date.now()
    this.poller = setInterval(() => {
      if (this.connected && Date.now() - lastRead < CHECK_MS) return
      lastRead = Date.now()
      // An EventSource answered with an HTTP error (a proxy's 502 while the service restarts) gives up for good.
      if (this.source?.readyState === EventSource.CLOSED) this.reopen()
      if (this.watched.size > 0) for (const id of this.watched) void this.read(id)
      else if (!this.connected) void this.probe()
    }, POLL_MS)
  }

  private reopen(): void {
    this.close()
    this.open()
  }

  private async read(taskId: string): Promise<void> {
    let record: TaskRecord
    try {
      record = await request<TaskRecord>(`/admin/tasks/${encodeURIComponent(taskId)}`)
    } catch (error) {
      // The stream or the next poll will tell how the task goes; a refused connection says the service is away.
      this.setReachable(!isNetworkFailure(error))
      // Removed while the page was not listening (deleted elsewhere, or lost with a service's data): no event will come.
      if (error instanceof RequestError && error.status === 404) this.removed(taskId)
      return
    }
    // Reachable first: after an outage, this answer is the service's word on the task, whatever the page knew.
    this.setReachable(true)
    this.deliver(record)
  }

  private async probe(): Promise<void> {
    try {
      await request(PROBE_PATH)
      this.setReachable(true)
    } catch (error) {
      this.setReachable(!isNetworkFailure(error))
    }
  }

  private setReachable(reachable: boolean): void {
    if (reachable === this.reachable) return
    this.reachable = reachable
    // Back from an outage: a restarted service puts a running task back in the queue (its progress starts
    // again), so the records shown before must not hide the ones it gives now as older.
    if (reachable) this.shown.forgetOpen()
    for (const listener of this.reachabilityListeners) listener(reachable)
  }

  private deliver(record: TaskRecord): void {
    const id = record.task_id
    if (!this.shown.accept(record, this.watched.has(id))) return
    if (hasEnded(record) && this.watched.delete(id)) this.ended.add(id)
    for (const listener of this.listeners) listener(record)
  }

  private removed(taskId: string): void {
    this.watched.delete(taskId)
    this.ended.delete(taskId)
    this.shown.forget(taskId)
    for (const listener of this.removedListeners) listener(taskId)
  }

  private close(): void {
    this.source?.close()
    this.source = undefined
    clearInterval(this.poller)
  }
}

/** `request` says a network failure with status 0: no answer came, whatever the reason. */
const isNetworkFailure = (error: unknown) => error instanceof RequestError && error.status === 0
