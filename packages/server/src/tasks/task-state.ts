import { IMAGE_EXTENSIONS, type Output, type TaskRecord, type TaskStatus, type TaskType, type Variant } from '@mos/sdk/contract'

/**
 * A task as stored: the public fields of section 2.1 plus what the service needs to run it again
 * after a restart (`job`). `toTaskRecord` is the only way a task leaves the service.
 */
export interface TaskState {
  task_id: string
  type: TaskType
  status: TaskStatus
  progress?: number
  input_filename: string
  input_size_bytes: number
  created_at: string
  started_at?: string
  completed_at?: string
  failed_at?: string
  error?: string
  output?: Output
  /** Diagnosis result (variant A). */
  result?: unknown
  /** Extra facts an operation reports (e.g. repair counts); allowed by the contract's silence. */
  details?: Record<string, unknown>
  batch_id?: string
  /** `keyOwner` of the API key that submitted the task (never the key); not part of the public record. */
  owner?: string
  /** When the retention sweep removes an ended task (ISO 8601); allowed by the contract's silence. */
  expires_at?: string
  job: TaskJob
}

export interface TaskJob {
  /** File-store key of the upload. */
  inputKey: string
  /** Input format: the upload's lower-case extension. */
  format: string
  options: Record<string, unknown>
  /** File-store key of the result, once there is one. */
  outputKey?: string
  /** How many times a worker started this task (at-least-once execution). */
  attempts: number
  /** X-Request-Id of the upload that made the task: the task's log lines carry it, in whichever process. */
  requestId?: string
  /** Where the finished record is POSTed (Mos extension `callback_url`, checked at submit). */
  callbackUrl?: string
}

/** The public record of a task in the given variant (2.1): fields per status, nothing internal. */
export function toTaskRecord(task: TaskState, variant: Variant): TaskRecord {
  const base = {
    task_id: task.task_id,
    status: task.status,
    type: task.type,
    input_filename: task.input_filename,
    input_size_bytes: task.input_size_bytes,
    created_at: task.created_at,
  }
  switch (task.status) {
    case 'pending':
      return { ...base, status: 'pending' }
    case 'processing':
      return { ...base, status: 'processing', progress: task.progress ?? 0, started_at: task.started_at ?? task.created_at }
    case 'completed':
      return {
        ...base,
        status: 'completed',
        progress: 100,
        ...(task.started_at ? { started_at: task.started_at } : {}),
        completed_at: task.completed_at!,
        output: task.output!,
        ...(task.result !== undefined && variant === 'A' ? { result: task.result as never } : {}),
        ...(task.details ?? {}),
        ...(task.expires_at ? { expires_at: task.expires_at } : {}),
      }
    case 'failed':
      // The failed record carries no progress (2.1).
      return {
        ...base,
        status: 'failed',
        error: task.error ?? 'unknown failure',
        ...(task.started_at ? { started_at: task.started_at } : {}),
        failed_at: task.failed_at!,
        ...(task.expires_at ? { expires_at: task.expires_at } : {}),
      }
  }
}

/**
 * What a task did, as the tag between the input's stem and the result's extension: the engine of a
 * compression (two downloads of one model, draco and meshopt, must not overwrite each other), the
 * operation otherwise. Convert's new extension says it all, so it adds a tag only where the
 * extension does not name the target (gltf comes back as a .zip bundle).
 */
function outputTag(type: TaskType, job: Pick<TaskJob, 'format' | 'options'>, extension: string): string {
  const option = (name: string) => (typeof job.options[name] === 'string' ? (job.options[name] as string) : '')
  const image = (IMAGE_EXTENSIONS as readonly string[]).includes(job.format)
  switch (type) {
    case 'compress':
      return option('engine') || 'compressed'
    case 'convert': {
      const target = option('target_format')
      if (target && target !== extension) return target
      return extension === job.format ? 'converted' : ''
    }
    case 'repair':
      return 'repaired'
    case 'diagnose':
      return 'diagnosis'
    case 'texture_optimize':
      return image ? 'optimized' : 'textures'
    case 'texture_ktx2':
      return image ? '' : 'ktx2'
  }
}

/**
 * The result's file name: the input's stem, what was done, the output's extension, dot-separated
 * (`model.draco.glb`, `model.meshopt.glb`, `model.repaired.glb`, `model.textures.glb`,
 * `model.ktx2.glb`, `model.obj`, `model.gltf.zip`, `photo.optimized.jpg`, `photo.ktx2`).
 */
export function outputFilename(inputFilename: string, type: TaskType, extension: string, job: Pick<TaskJob, 'format' | 'options'>): string {
  const base = inputFilename.replace(/^.*[\\/]/, '')
  const stem = base.includes('.') ? base.slice(0, base.lastIndexOf('.')) : base
  const tag = outputTag(type, job, extension)
  return `${stem || 'model'}${tag && tag !== extension ? `.${tag}` : ''}.${extension}`
}

/** Output sizes relative to the input, for compress and texture tasks (2.2). */
export function sizeFigures(inputBytes: number, outputBytes: number): Pick<Output, 'compression_ratio' | 'savings_percent'> {
  if (inputBytes === 0) return { compression_ratio: 1, savings_percent: 0 }
  const ratio = outputBytes / inputBytes
  return { compression_ratio: round(ratio, 4), savings_percent: round((1 - ratio) * 100, 2) }
}

function round(value: number, digits: number): number {
  const f = 10 ** digits
  return Math.round(value * f) / f
}

/** ISO 8601 UTC timestamp, the contract's time format. */
export const now = () => new Date().toISOString()
