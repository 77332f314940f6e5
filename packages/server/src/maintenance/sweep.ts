import { TERMINAL_TASK_STATUSES } from '@mos/sdk/contract'
import type { Storage } from 'unstorage'
import type { Logger } from '../logging/create-logger.ts'
import type { TaskQueue } from '../queue/task-queue.ts'
import { isPartFile, type FileStore } from '../storage/file-store.ts'
import type { TaskStore } from '../storage/task-store.ts'
import type { TaskState } from '../tasks/task-state.ts'
import { sweepBatches } from './sweep-batches.ts'
import type { SweepLock } from './sweep-lock.ts'

export interface SweeperOptions {
  tasks: TaskStore
  files: FileStore & { abortStaleUploads?(olderThanMs: number): Promise<number> }
  /** Removes the part files killed record writes left (fs records), untouched for the given age; returns how many. */
  recordParts?: (olderThanMs: number) => Promise<number>
  queue: TaskQueue
  lock: SweepLock
  /** Console sessions, whose expired ones each round removes. */
  sessions?: { sweep(now: number): Promise<number> }
  /** Record storage, for the batch records that follow their tasks out. */
  records?: Storage
  /** How long ended tasks are kept (for records written without `expires_at`). */
  retentionMs: number
  /** Uploads with no task record older than this are removed. */
  orphanAgeMs: number
  /** Queue again unfinished tasks (only for a queue that ignores a task already in it: bullmq). */
  requeue: boolean
  intervalMs: number
  /** Where a failed round is reported. */
  logger?: Logger
}

export interface SweepReport {
  expired: number
  orphans: number
  /** Part files a killed write left: in the folder of a task that has a record, and among fs records. */
  partFiles: number
  requeued: number
  abortedUploads: number
  batches: number
  sessions: number
}

/**
 * The background sweep. Each round (taken by one process at a time through the lock; every step is
 * also safe when two run at once, since removing twice is harmless):
 * - removes the files, then the record, of ended tasks past `expires_at` (a crash in between leaves
 *   a record whose download answers 404, and the next round finishes the job);
 * - removes batch records none of whose tasks is left, and expired console sessions;
 * - removes uploads that never got a record (a process killed between upload and record) once they
 *   are older than `orphanAgeMs`, and unfinished S3 multipart uploads as old;
 * - removes, as old, the part files of writes killed in the folder of a task that has a record (an
 *   engine thread's result, its process killed mid-write: the task runs again under a new one), and
 *   those of record writes killed in an fs records folder;
 * - with bullmq, queues every unfinished task again: a no-op for tasks already queued or running
 *   (the job id is the task id), and the rescue of a task whose API process died between writing
 *   its record and queuing it, or whose job BullMQ dropped after too many stalls.
 */
export function createSweeper(options: SweeperOptions) {
  const { tasks, files, queue, lock } = options
  let timer: NodeJS.Timeout | undefined
  let running: Promise<unknown> | undefined

  async function sweepOnce(): Promise<SweepReport> {
    const now = Date.now()
    const all = await tasks.list()
    const known = new Set(all.map((task) => task.task_id))
    const report: SweepReport = { expired: 0, orphans: 0, partFiles: 0, requeued: 0, abortedUploads: 0, batches: 0, sessions: 0 }
    report.expired = await removeExpired(options, all, known, now)
    Object.assign(report, await removeOrphans(options, known, now))
    if (files.abortStaleUploads) report.abortedUploads = await files.abortStaleUploads(options.orphanAgeMs)
    if (options.recordParts) report.partFiles += await options.recordParts(options.orphanAgeMs)
    if (options.records) report.batches = await sweepBatches(options.records, known, options.orphanAgeMs, now)
    if (options.sessions) report.sessions = await options.sessions.sweep(now)
    if (options.requeue) report.requeued = await requeueUnfinished(queue, all)
    return report
  }

  async function round(): Promise<void> {
    try {
      if (await lock.acquire('sweep', options.intervalMs)) await sweepOnce()
    } catch (error) {
      options.logger?.error({ error: (error as Error).message, nextRoundMs: options.intervalMs }, 'sweep failed')
    }
  }

  return {
    sweepOnce,
    /** Runs a round now, then every `intervalMs`. */
    start() {
      if (timer) return
      const tick = () => {
        running = round().finally(() => {
          running = undefined
          if (timer) timer = setTimeout(tick, options.intervalMs).unref()
        })
      }
      timer = setTimeout(tick, 0).unref()
    },
    async stop() {
      clearTimeout(timer)
      timer = undefined
      await running
      await lock.close()
    },
  }
}

/** When an ended task goes: its `expires_at`, or its end plus the retention for records written without one. */
function expiresAt(task: TaskState, retentionMs: number): number {
  if (task.expires_at) return Date.parse(task.expires_at)
  const ended = task.completed_at ?? task.failed_at
  return ended ? Date.parse(ended) + retentionMs : Infinity
}

/** Removes the files, then the record, of each ended task past its time; drops them from `known`. */
async function removeExpired(options: SweeperOptions, all: TaskState[], known: Set<string>, now: number): Promise<number> {
  let expired = 0
  for (const task of all) {
    if (TERMINAL_TASK_STATUSES.includes(task.status) && expiresAt(task, options.retentionMs) <= now) {
      await options.files.remove(`tasks/${task.task_id}`)
      await options.tasks.remove(task.task_id)
      known.delete(task.task_id)
      expired++
    }
  }
  return expired
}

/**
 * Removes task folders without a record whose newest file is older than `orphanAgeMs`, and in the
 * others the part files untouched as long (a write under way keeps touching its own).
 */
async function removeOrphans(options: SweeperOptions, known: Set<string>, now: number): Promise<{ orphans: number; partFiles: number }> {
  // Newest change per task folder that has no record.
  const newest = new Map<string, number>()
  const staleParts: string[] = []
  for await (const file of options.files.list('tasks/')) {
    const id = file.key.split('/')[1]
    if (!id) continue
    if (!known.has(id)) newest.set(id, Math.max(newest.get(id) ?? 0, file.modifiedAt))
    else if (isPartFile(file.key) && now - file.modifiedAt > options.orphanAgeMs) staleParts.push(file.key)
  }
  for (const key of staleParts) await options.files.remove(key)
  let orphans = 0
  for (const [id, modifiedAt] of newest) {
    // Checked again right before removing: its record may have been written since the listing.
    if (now - modifiedAt > options.orphanAgeMs && !(await options.tasks.get(id))) {
      await options.files.remove(`tasks/${id}`)
      orphans++
    }
  }
  return { orphans, partFiles: staleParts.length }
}

/** Queues every unfinished task again, oldest first. */
async function requeueUnfinished(queue: SweeperOptions['queue'], all: TaskState[]): Promise<number> {
  const unfinished = all.filter((task) => task.status === 'pending' || task.status === 'processing')
  unfinished.sort((a, b) => a.created_at.localeCompare(b.created_at))
  for (const task of unfinished) await queue.enqueue(task.task_id)
  return unfinished.length
}

export type Sweeper = ReturnType<typeof createSweeper>

/**
 * Sweep often enough that a task (or an orphan upload) is gone soon after its time is up: a quarter
 * of the shorter of the two, at least once a minute and at most once a second.
 */
export const sweepIntervalMs = (retentionMs: number, orphanAgeMs: number) =>
  Math.min(60_000, Math.max(1000, Math.round(Math.min(retentionMs, orphanAgeMs) / 4)))
