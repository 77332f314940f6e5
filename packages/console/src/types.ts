import type { DiagnosisResult as ContractDiagnosis, DiagnosisIssue } from '@mos/sdk/contract'

/** The documents of the console's HTTP interface (CONSOLE-INTERFACE.md, docs/console.md) as the console reads them. */

export interface Session {
  user: string
  csrf_token: string
  expires_at: string
}

/** When a field applies (the contract's FieldCondition, as GET /config gives it). */
export interface FieldCondition {
  field: string
  /** The other field's value, or one of its values. */
  equals: string | string[]
  /** Applies too while the other field is empty (texture_progressive_jpeg with no texture_format). */
  orAbsent?: boolean
}

export type FieldKind = 'enum' | 'integer' | 'number' | 'boolean' | 'string'

/** One form field of an operation, with the ranges of the running variant (GET /config). */
export interface FieldInfo {
  name: string
  kind: FieldKind
  required?: boolean
  default?: string | number | boolean | null
  min?: number | null
  max?: number | null
  choices?: (string | number)[] | null
  extension?: boolean
  /** Min excluded (a share: above 0). */
  min_exclusive?: boolean
  /** Sent only when another field has this value (e.g. Draco's quantization bits). */
  applies_when?: FieldCondition | null
  /** Other ranges while another field has a value (the quality of png). */
  alternatives?: { when: FieldCondition; min: number | null; max: number | null; default: string | number | boolean | null }[]
  /** What each choice sets in the fields the request leaves out (compress's `preset`); null for other fields. */
  presets?: Record<string, Record<string, string | number | boolean>> | null
  description?: string
}

export interface OperationInfo {
  type: string
  path: string
  admin_path: string
  input_formats: string[]
  images: boolean
  fields: FieldInfo[]
}

export interface ConsoleConfig {
  variant: 'A' | 'B'
  version: string
  operations: OperationInfo[]
  /** `max_files` is null when the licence sets no limit. */
  batch: { admin_path: string; max_files: number | null; fields: FieldInfo[] } | null
  limits: Record<string, unknown>
}

/** One issue of a diagnosis, as the contract declares it (section 2.3). */
export type Issue = DiagnosisIssue

/** A diagnose task's result: the contract's document plus the file-level `issues` Mos adds (docs/diagnose.md). */
export type DiagnosisResult = ContractDiagnosis & { issues?: Issue[] }

/** A task record as GET /admin/tasks and /events carry it: the API's record plus the admin's fields. */
export interface TaskRecord {
  task_id: string
  status: 'pending' | 'processing' | 'completed' | 'failed'
  type?: string
  progress?: number
  input_filename?: string
  input_size_bytes?: number
  created_at?: string
  started_at?: string
  completed_at?: string
  failed_at?: string
  owner?: string
  batch_id?: string
  error?: string
  output?: { filename: string; size_bytes: number; compression_ratio?: number; savings_percent?: number }
  result?: DiagnosisResult
  /** What the target could not hold, or what was changed to write it. */
  notes?: string[]
  /** What the reader met in the input and worked around (a texture not uploaded, glTF 1.0 shaders). */
  warnings?: string[]
  [key: string]: unknown
}

export interface TaskPage {
  tasks: TaskRecord[]
  next_cursor: string | null
}

export interface MetricsSnapshot {
  time: string
  requests_total: number
  /** `scope`: the deployment's totals (kept in the queue's Redis), or this process's since it started. */
  tasks: { completed: number; failed: number; scope: 'cluster' | 'process'; pending: number; processing: number }
  queue_length: number
  rss_mb: number
  heap_mb: number
  event_loop_lag_ms: number
}
