import { z } from 'zod'
import { taskReportsShape } from './task-reports.ts'
import { ENGINES, MODEL_FORMATS, TASK_STATUSES, TASK_TYPES } from './vocabulary.ts'

/**
 * Runtime schemas of every response document (section 2). They accept extra fields, which the
 * contract's silence allows (e.g. `expires_at`, repair counts); they reject wrong types and values.
 */

const isoTimestamp = z.iso.datetime({ offset: true })
const nonNegativeInt = z.number().int().nonnegative()

export const errorBodySchema = z.object({ error: z.string().min(1) })

export const outputSchema = z.object({
  filename: z.string().min(1),
  size_bytes: nonNegativeInt,
  compression_ratio: z.number().nonnegative().optional(),
  savings_percent: z.number().optional(),
})

export const issueSchema = z.object({
  type: z.string(),
  count: nonNegativeInt,
  severity: z.enum(['low', 'medium', 'high', 'critical']),
})

export const meshDiagnosisSchema = z.object({
  name: z.string(),
  vertices: nonNegativeInt,
  triangles: nonNegativeInt,
  has_normals: z.boolean(),
  has_texcoords: z.boolean(),
  has_colors: z.boolean(),
  has_tangents: z.boolean(),
  skinned: z.boolean(),
  morph_targets: nonNegativeInt,
  issues: z.array(issueSchema),
})

export const textureDiagnosisSchema = z.object({
  name: z.string(),
  format: z.string(),
  width: nonNegativeInt,
  height: nonNegativeInt,
  size_kb: nonNegativeInt,
})

export const diagnosisResultSchema = z.object({
  format: z.string(),
  version: z.string(),
  file_size_bytes: nonNegativeInt,
  meshes: z.array(meshDiagnosisSchema),
  textures: z.array(textureDiagnosisSchema),
  animations: z.array(z.unknown()),
  total_issues: nonNegativeInt,
  recommendations: z.array(z.string()),
})

const taskBase = {
  task_id: z.string().min(1),
  type: z.enum(TASK_TYPES),
  input_filename: z.string(),
  input_size_bytes: nonNegativeInt,
  created_at: isoTimestamp,
}

export const pendingTaskSchema = z.object({ ...taskBase, status: z.literal('pending') })
export const processingTaskSchema = z.object({
  ...taskBase,
  status: z.literal('processing'),
  progress: z.number().int().min(0).max(100),
  started_at: isoTimestamp,
})
export const completedTaskSchema = z.object({
  ...taskBase,
  status: z.literal('completed'),
  progress: z.literal(100),
  started_at: isoTimestamp.optional(),
  completed_at: isoTimestamp,
  output: outputSchema,
  result: diagnosisResultSchema.optional(),
  // Mos extensions: what the operation's steps report (task-reports.ts).
  ...taskReportsShape,
})
/**
 * The failed record carries no progress (2.1): `progress` is declared as a key that must be absent,
 * so the rule holds even though unknown keys are otherwise allowed (and stripped).
 */
export const failedTaskSchema = z.object({
  task_id: z.string().min(1),
  status: z.literal('failed'),
  error: z.string().min(1),
  created_at: isoTimestamp,
  failed_at: isoTimestamp,
  progress: z.never({ error: 'a failed task carries no progress' }).optional(),
})

export const taskRecordSchema = z.union([pendingTaskSchema, processingTaskSchema, completedTaskSchema, failedTaskSchema])

export const submitResponseSchema = z.object({
  task_id: z.string().min(1),
  status: z.literal('pending'),
  message: z.string().optional(),
})

export const batchTaskItemSchema = z.object({
  task_id: z.string().min(1),
  filename: z.string(),
  status: z.enum(TASK_STATUSES),
})

export const batchSubmitResponseSchema = z.object({
  batch_id: z.string().min(1),
  total: nonNegativeInt,
  tasks: z.array(batchTaskItemSchema.extend({ status: z.literal('pending') })),
})

/** Batch statuses: processing while any sub-task runs, then one of the terminal three. */
export const BATCH_STATUSES = ['processing', 'completed', 'partially_failed', 'failed'] as const

export const batchRecordSchema = z.object({
  batch_id: z.string().min(1),
  status: z.enum(BATCH_STATUSES),
  total: nonNegativeInt,
  completed: nonNegativeInt,
  failed: nonNegativeInt,
  tasks: z.array(batchTaskItemSchema),
})

export const healthSchemaA = z.object({ status: z.literal('ok') })
export const healthSchemaB = z.object({
  status: z.literal('healthy'),
  version: z.string().min(1),
  uptime_seconds: nonNegativeInt,
  active_tasks: nonNegativeInt,
  queue_length: nonNegativeInt,
})

/**
 * Mos extension of both capabilities documents: the extension fields each operation accepts
 * (docs/api.md, "Mos extensions"). Optional: another deployment of the interface need not send it.
 */
const mosExtensionsSchema = z.partialRecord(z.enum(TASK_TYPES), z.array(z.string())).optional()

export const capabilitiesSchemaA = z.object({
  engines: z.array(z.enum(ENGINES)),
  formats: z.array(z.enum(MODEL_FORMATS)),
  features: z.array(z.enum(TASK_TYPES)),
  mos_extensions: mosExtensionsSchema,
})

const engineInfoSchema = z.object({ available: z.boolean(), version: z.string(), binary_path: z.string() })

export const capabilitiesSchemaB = z.object({
  engines: z.object({ draco: engineInfoSchema, meshopt: engineInfoSchema }),
  formats: z.object({ input: z.array(z.enum(MODEL_FORMATS)), output: z.array(z.enum(MODEL_FORMATS)) }),
  license: z.object({ authorized: z.boolean(), tier: z.number().int(), status: z.string() }),
  mos_extensions: mosExtensionsSchema,
})

const limitsSchema = z.object({ max_file_size_mb: z.number().int(), max_batch_count: z.number().int() })

export const licenseVerifySchemaA = z.object({
  valid: z.boolean(),
  tier: z.string(),
  expires_at: isoTimestamp,
  limits: limitsSchema,
})
export const licenseVerifySchemaB = z.object({
  success: z.boolean(),
  message: z.string(),
  expires_at: z.number().int(),
})

export const licenseInfoSchemaA = z.object({
  mode: z.string(),
  tier: z.string(),
  license_key: z.string(),
  expires_at: isoTimestamp,
  trial: z.object({ enabled: z.boolean(), used_files: nonNegativeInt, max_files: z.number().int() }),
  limits: limitsSchema.extend({ max_texture_size_mb: z.number().int() }),
})
export const licenseInfoSchemaB = z.object({
  authorized: z.boolean(),
  server_fingerprint: z.string(),
  status: z.string(),
  license_expires_at: z.number().int(),
  tier: z.number().int().min(0).max(2),
  days_until_expiry: z.number().int(),
  machine_id: z.string(),
})

export type Output = z.infer<typeof outputSchema>
export type DiagnosisResult = z.infer<typeof diagnosisResultSchema>
export type MeshDiagnosis = z.infer<typeof meshDiagnosisSchema>
export type TextureDiagnosis = z.infer<typeof textureDiagnosisSchema>
export type DiagnosisIssue = z.infer<typeof issueSchema>
export type PendingTask = z.infer<typeof pendingTaskSchema>
export type ProcessingTask = z.infer<typeof processingTaskSchema>
export type CompletedTask = z.infer<typeof completedTaskSchema>
export type FailedTask = z.infer<typeof failedTaskSchema>
export type TaskRecord = z.infer<typeof taskRecordSchema>
export type SubmitResponse = z.infer<typeof submitResponseSchema>
export type BatchSubmitResponse = z.infer<typeof batchSubmitResponseSchema>
export type BatchStatus = (typeof BATCH_STATUSES)[number]
export type BatchRecord = z.infer<typeof batchRecordSchema>
export type HealthA = z.infer<typeof healthSchemaA>
export type HealthB = z.infer<typeof healthSchemaB>
export type CapabilitiesA = z.infer<typeof capabilitiesSchemaA>
export type CapabilitiesB = z.infer<typeof capabilitiesSchemaB>
export type LicenseVerifyA = z.infer<typeof licenseVerifySchemaA>
export type LicenseVerifyB = z.infer<typeof licenseVerifySchemaB>
export type LicenseInfoA = z.infer<typeof licenseInfoSchemaA>
export type LicenseInfoB = z.infer<typeof licenseInfoSchemaB>
