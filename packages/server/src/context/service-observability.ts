import type { Config } from '../config/schema.ts'
import { createLogger, type Logger } from '../logging/create-logger.ts'
import { createMetrics, type Metrics } from '../metrics/metrics.ts'
import type { TaskQueue } from '../queue/task-queue.ts'
import { createTaskLog, type TaskLog } from '../tasks/task-log.ts'

/** What the service tells about itself: the log, the task lines in it, and the metrics. */
export interface ServiceObservability {
  /** The process's logger (made once in main.ts or startServer). */
  logger: Logger
  taskLog: TaskLog
  metrics: Metrics
}

/** Creates the observability part; `queue` is read when metrics are collected (the queue is made later). */
export function createServiceObservability(config: Config, options: { logger?: Logger; queue: () => TaskQueue }): ServiceObservability {
  const logger = options.logger ?? createLogger(config.log)
  return { logger, taskLog: createTaskLog(logger), metrics: createMetrics({ variant: config.server.variant, queue: options.queue }) }
}
