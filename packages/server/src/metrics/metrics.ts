import type { Variant } from '@mos/sdk/contract'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import { currentRuntime } from '../runtime.ts'
import type { TaskState } from '../tasks/task-state.ts'

export interface MetricsOptions {
  variant: Variant
  /** Live queue figures, read at scrape time. */
  queue: () => { running: number; waiting: number }
}

export interface Metrics {
  /** This service's own registry (never prom-client's global one: two services in one process must not mix). */
  registry: Registry
  /** A task reached completed or failed (the runner's `onSettled`). */
  taskSettled(task: TaskState): void
  /** An HTTP response left the app (h3's `onResponse`). */
  responseSent(method: string, status: number): void
  /** This process's totals since it started, in both variants (the console's charts). */
  totals(): { requests: number; completed: number; failed: number }
}

const DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800]
const RATIO_BUCKETS = [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 2]

/** Seconds the task spent processing (started → finished); creation time when it never started. */
function processingSeconds(task: TaskState): number | undefined {
  const end = task.completed_at ?? task.failed_at
  if (!end) return undefined
  const seconds = (Date.parse(end) - Date.parse(task.started_at ?? task.created_at)) / 1000
  return Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined
}

/**
 * The metric families of section 4.15 for the configured variant, plus prom-client's default
 * process metrics. Labels are only bounded values (task type, status, HTTP method and status):
 * never task ids or keys, which would grow without end and leak.
 */
export function createMetrics(options: MetricsOptions): Metrics {
  const totals = { requests: 0, completed: 0, failed: 0 }
  const families = createMetricFamilies(options)
  return {
    registry: families.registry,
    taskSettled(task) {
      if (task.status === 'completed') totals.completed++
      else if (task.status === 'failed') totals.failed++
      families.taskSettled(task)
    },
    responseSent(method, status) {
      totals.requests++
      families.responseSent(method, status)
    },
    totals: () => ({ ...totals }),
  }
}

/** The Prometheus families of the variant (the published names differ between A and B). */
function createMetricFamilies(options: MetricsOptions): Omit<Metrics, 'totals'> {
  const registry = new Registry()
  const registers = [registry]
  // The process's own figures (CPU, memory, event loop): a Worker has no process to describe
  // (workerd throws "process.cpuUsage is not implemented"), and its platform reports them.
  if (currentRuntime() !== 'workerd') collectDefaultMetrics({ register: registry })

  if (options.variant === 'A') {
    return { registry, ...variantAFamilies(registers, options) }
  }
  return { registry, ...variantBFamilies(registers, options) }
}

/** What a variant's families record: a task's end and a response. */
type FamilyRecorders = Omit<Metrics, 'totals' | 'registry'>

/** Variant A's published families: tasks by type and status, durations, files, compression ratios, active tasks. */
function variantAFamilies(registers: Registry[], options: MetricsOptions): FamilyRecorders {
  const tasks = new Counter({
    name: 'service_tasks_total',
    help: 'Total tasks, labelled by type and status.',
    labelNames: ['type', 'status'],
    registers,
  })
  const duration = new Histogram({
    name: 'service_task_duration_seconds',
    help: 'Task duration distribution (processing time).',
    labelNames: ['type'],
    buckets: DURATION_BUCKETS,
    registers,
  })
  const files = new Counter({ name: 'service_files_processed_total', help: 'Total files processed (tasks completed).', registers })
  const ratio = new Histogram({
    name: 'service_compression_ratio',
    help: 'Compression ratio distribution (output size / input size).',
    labelNames: ['type'],
    buckets: RATIO_BUCKETS,
    registers,
  })
  new Gauge({
    name: 'service_active_tasks_gauge',
    help: 'Current concurrent tasks.',
    registers,
    collect() {
      this.set(options.queue().running)
    },
  })
  return {
    taskSettled(task) {
      tasks.inc({ type: task.type, status: task.status })
      const seconds = processingSeconds(task)
      if (seconds !== undefined) duration.observe({ type: task.type }, seconds)
      if (task.status === 'completed') files.inc()
      if (task.output?.compression_ratio !== undefined) ratio.observe({ type: task.type }, task.output.compression_ratio)
    },
    responseSent() {},
  }
}

/** Variant B's published families: requests, active and waiting tasks, durations, completed and failed tasks, errors. */
function variantBFamilies(registers: Registry[], options: MetricsOptions): FamilyRecorders {
  const requests = new Counter({ name: 'service_requests_total', help: 'Total requests.', labelNames: ['method', 'status'], registers })
  new Gauge({
    name: 'service_active_tasks',
    help: 'Current concurrent tasks.',
    registers,
    collect() {
      this.set(options.queue().running)
    },
  })
  new Gauge({
    name: 'service_queue_length',
    help: 'Tasks waiting in the queue.',
    registers,
    collect() {
      this.set(options.queue().waiting)
    },
  })
  const duration = new Histogram({
    name: 'service_task_processing_duration_seconds',
    help: 'Task processing duration distribution.',
    labelNames: ['type'],
    buckets: DURATION_BUCKETS,
    registers,
  })
  const completed = new Counter({ name: 'service_tasks_completed_total', help: 'Total completed tasks.', labelNames: ['type'], registers })
  const failed = new Counter({ name: 'service_tasks_failed_total', help: 'Total failed tasks.', labelNames: ['type'], registers })
  const errors = new Counter({
    name: 'service_errors_total',
    help: 'Total error responses (HTTP status 400 and above).',
    labelNames: ['status'],
    registers,
  })
  return {
    taskSettled(task) {
      ;(task.status === 'completed' ? completed : failed).inc({ type: task.type })
      const seconds = processingSeconds(task)
      if (seconds !== undefined) duration.observe({ type: task.type }, seconds)
    },
    responseSent(method, status) {
      requests.inc({ method, status: String(status) })
      if (status >= 400) errors.inc({ status: String(status) })
    },
  }
}
