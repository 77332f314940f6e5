import type { EngineLogEntry } from '@mos/engines'
import type { Logger } from '../logging/create-logger.ts'
import type { TaskState } from './task-state.ts'
import { errorText } from '../error-text.ts'

/**
 * One log line per task transition (queued, running, completed, failed), each carrying the
 * request id of the upload that made the task, so a request and everything its task did can be
 * found with one search, whichever process ran it.
 */
export interface TaskLog {
  queued(task: TaskState): void
  running(task: TaskState): void
  /** A completed or failed task; `runMs` is this attempt's run time, `cause` what failed around its job (the record says it in the client's terms). */
  settled(task: TaskState, runMs?: number, cause?: unknown): void
  /** A line an engine thread wrote while running the task (a warning, its retirement). */
  engine(task: TaskState, entry: EngineLogEntry): void
  /** A storage step of the run (`writing its record`, `reading its input` …) failed (disk full, storage away) and is retried after `waitMs`. */
  storeRetry(task: TaskState, step: string, reason: string, waitMs: number): void
}

/** The fields every line of a task carries. */
function taskFields(task: TaskState): Record<string, unknown> {
  const engine = task.job.options.engine
  const target = task.job.options.target_format
  return {
    taskId: task.task_id,
    ...(task.job.requestId ? { requestId: task.job.requestId } : {}),
    type: task.type,
    ...(typeof engine === 'string' ? { engine } : {}),
    ...(typeof target === 'string' ? { targetFormat: target } : {}),
    ...(task.batch_id ? { batchId: task.batch_id } : {}),
    inputBytes: task.input_size_bytes,
  }
}

export function createTaskLog(logger: Logger): TaskLog {
  return {
    queued(task) {
      logger.info({ ...taskFields(task), status: 'queued' }, 'task queued')
    },
    running(task) {
      logger.info({ ...taskFields(task), status: 'running', attempt: task.job.attempts }, 'task running')
    },
    settled(task, runMs, cause) {
      const fields = {
        ...taskFields(task),
        status: task.status,
        attempt: task.job.attempts,
        ...(runMs !== undefined ? { durationMs: Math.round(runMs) } : {}),
      }
      if (task.status === 'completed') {
        const warnings = task.details?.warnings
        logger.info(
          { ...fields, outputBytes: task.output?.size_bytes, ...(Array.isArray(warnings) ? { warnings: warnings.length } : {}) },
          'task completed',
        )
      } else {
        logger.warn({ ...fields, error: task.error, ...(cause !== undefined ? { cause: errorText(cause) } : {}) }, 'task failed')
      }
    },
    storeRetry(task, step, reason, waitMs) {
      logger.warn({ ...taskFields(task), error: reason, waitMs }, `${step} failed (${reason}); retrying in ${waitMs} ms`)
    },
    engine(task, entry) {
      logger[entry.level]({ ...taskFields(task), ...entry.fields, thread: 'engine' }, entry.message)
    },
  }
}
