import { z } from 'zod'
import { batchRecordSchema, batchSubmitResponseSchema, submitResponseSchema, taskRecordSchema } from './documents.ts'
import {
  batchCompressFieldSpecs,
  compressFieldSpecs,
  convertFieldSpecs,
  textureKtx2FieldSpecs,
  textureOptimizeFieldSpecs,
  type FieldCondition,
  type FieldSpec,
} from './fields.ts'
import { LIMIT_EXCEEDED_STATUS } from './errors.ts'
import { MAX_TASK_WAIT_SECONDS } from './extensions.ts'
import { OPERATION_ENDPOINTS } from './operations.ts'
import { taskDeletedSchema, taskListQuerySchema, taskListSchema } from './task-control.ts'
import { IMPLEMENTED_TASK_TYPES, OUTPUT_FORMATS, type TaskType, type Variant } from './vocabulary.ts'
import { VARIANT_SCHEMAS } from './variant-documents.ts'

/**
 * The routes the OpenAPI documents describe, one entry each: the contract's endpoints (section 4)
 * and the Mos extensions. `openApiDocument` turns them into paths; adding a route to the service
 * means adding its entry here.
 */
export interface ApiRoute {
  method: 'get' | 'post' | 'delete'
  /** Full path, OpenAPI style (`/api/v1/tasks/{task_id}`). */
  path: string
  summary: string
  description?: string
  /** A Mos extension, not in the published interface (`x-mos-extension: true`). */
  extension?: boolean
  /** Needs no X-API-Key. */
  public?: boolean
  /** Query parameters, from a zod object. */
  query?: z.ZodObject
  /** A multipart/form-data body: its file part(s) and the fields' specs (with conditional alternatives). */
  form?: FormBody
  /** An application/json body. */
  json?: z.ZodType
  /** The 200 answer: a zod schema (JSON), or another media type. */
  ok: z.ZodType | { mediaType: string; description: string; binary?: boolean }
  /** Error statuses besides 401 (which every keyed route has). */
  errors?: number[]
}

export interface FormBody {
  file: { name: string; many?: boolean; description: string }
  fields: readonly FieldSpec[]
  /** Rules that differ with another field's value: `field` takes `specs` when `when` (`condition`) holds. */
  alternatives?: { when: string; condition: FieldCondition; specs: readonly FieldSpec[] }[]
}

/** Options of the deployment a document describes (the served one reads its configuration). */
export interface ApiRouteOptions {
  /** Whether GET /metrics needs the key (SERVICE__METRICS__REQUIRE_KEY, default true). */
  metricsRequireKey?: boolean
}

const taskIdParam = '{task_id}'

/** The long poll's query on a task read (a Mos extension beside the contract's plain read). */
const taskWaitQuerySchema = z.object({ wait: z.int().min(0).max(MAX_TASK_WAIT_SECONDS).optional() })

/** The form of one submit endpoint in a variant (the OpenAPI documents and the web console's forms read it). */
export function operationForm(type: TaskType, variant: Variant): FormBody {
  const file = { name: 'file', description: type.startsWith('texture') ? 'Model file or standalone image.' : 'Model file.' }
  switch (type) {
    case 'compress':
      return { file, fields: compressFieldSpecs(variant) }
    case 'convert':
      return { file, fields: convertFieldSpecs(OUTPUT_FORMATS[variant]) }
    case 'texture_optimize':
      return {
        file,
        fields: textureOptimizeFieldSpecs('jpeg'),
        alternatives: [{ when: 'format is png', condition: { field: 'format', equals: 'png' }, specs: textureOptimizeFieldSpecs('png') }],
      }
    case 'texture_ktx2':
      return {
        file,
        fields: textureKtx2FieldSpecs(false),
        alternatives: [{ when: 'uastc is true', condition: { field: 'uastc', equals: 'true' }, specs: textureKtx2FieldSpecs(true) }],
      }
    case 'repair':
    case 'diagnose':
      return { file, fields: [] }
  }
}

/** The Mos extensions (docs/api.md), the same in both variants: a new extension route is one entry here. */
const EXTENSION_ROUTES: readonly ApiRoute[] = [
  {
    method: 'get',
    path: '/api/v1/tasks',
    summary: "List the key's tasks, newest first",
    extension: true,
    query: taskListQuerySchema,
    ok: taskListSchema,
    errors: [400],
  },
  {
    method: 'get',
    path: `/api/v1/tasks/${taskIdParam}/events`,
    summary: "Server-sent events of a task's progress",
    description: 'One `progress`, `completed` or `failed` event per change, the task record as data; ends after the final event.',
    extension: true,
    ok: { mediaType: 'text/event-stream', description: 'The event stream.' },
    errors: [404],
  },
  {
    method: 'post',
    path: `/api/v1/tasks/${taskIdParam}/cancel`,
    summary: 'Cancel a pending or processing task',
    description: 'The task ends failed with the error `cancelled`; a running engine job is stopped.',
    extension: true,
    ok: taskRecordSchema,
    errors: [404, 409],
  },
  {
    method: 'delete',
    path: `/api/v1/tasks/${taskIdParam}`,
    summary: 'Delete a task: its record and files',
    extension: true,
    ok: taskDeletedSchema,
    errors: [404],
  },
  {
    method: 'get',
    path: '/api/v1/openapi.json',
    summary: "This deployment's OpenAPI document",
    extension: true,
    public: true,
    ok: { mediaType: 'application/json', description: 'OpenAPI 3.1 document.' },
  },
  {
    method: 'get',
    path: '/api/v1/reference',
    summary: 'The API reference, rendered',
    extension: true,
    public: true,
    ok: { mediaType: 'text/html', description: 'The reference page.' },
  },
]

/** Every route of a variant's document, in the order of the contract's section 4, extensions after. */
export function apiRoutes(variant: Variant, options: ApiRouteOptions = {}): ApiRoute[] {
  const schemas = VARIANT_SCHEMAS[variant]
  return [
    { method: 'get', path: '/api/v1/health', summary: 'Service health', public: true, ok: schemas.health },
    { method: 'get', path: '/api/v1/capabilities', summary: 'Engines, formats and features of this deployment', ok: schemas.capabilities },
    ...OPERATION_ENDPOINTS.map((endpoint) => submitRoute(endpoint, variant)),
    ...TASK_ROUTES,
    ...batchAndLicenseRoutes(variant),
    {
      method: 'get',
      path: '/api/v1/metrics',
      summary: 'Prometheus metrics',
      public: options.metricsRequireKey === false,
      ok: { mediaType: 'text/plain', description: 'Prometheus text format.' },
    },
    ...EXTENSION_ROUTES,
  ]
}

/** An operation's submit route: its form in the variant, or 501 where the variant reserves it. */
function submitRoute(endpoint: (typeof OPERATION_ENDPOINTS)[number], variant: Variant): ApiRoute {
  const path = `/api/v1${endpoint.path}`
  const summary = `Submit a ${endpoint.type} task`
  if (!IMPLEMENTED_TASK_TYPES[variant].includes(endpoint.type)) {
    return { method: 'post', path, summary: `${summary} (reserved: 501 in variant ${variant})`, ok: z.never(), errors: [501] }
  }
  return {
    method: 'post',
    path,
    summary,
    form: operationForm(endpoint.type, variant),
    ok: submitResponseSchema,
    errors: [400, LIMIT_EXCEEDED_STATUS[variant], 402],
  }
}

/** The contract's task routes: the record (with the Mos long poll) and the result. */
const TASK_ROUTES: readonly ApiRoute[] = [
  {
    method: 'get',
    path: `/api/v1/tasks/${taskIdParam}`,
    summary: 'A task record',
    description: `Mos extension: \`?wait=<seconds>\` (0–${MAX_TASK_WAIT_SECONDS}) answers as soon as the task is completed or failed (a long poll).`,
    query: taskWaitQuerySchema,
    ok: taskRecordSchema,
    errors: [400, 404],
  },
  {
    method: 'get',
    path: `/api/v1/tasks/${taskIdParam}/download`,
    summary: "A completed task's result",
    ok: { mediaType: 'application/octet-stream', description: 'The result file.', binary: true },
    errors: [404, 409],
  },
]

/** Batch submit and read, and the licence's verify and info, as the variant words them. */
function batchAndLicenseRoutes(variant: Variant): ApiRoute[] {
  const schemas = VARIANT_SCHEMAS[variant]
  return [
    {
      method: 'post',
      path: '/api/v1/batch/compress',
      summary: 'Submit a batch of compress tasks',
      form: { file: { name: 'files', many: true, description: 'Model files (repeated part).' }, fields: batchCompressFieldSpecs() },
      ok: batchSubmitResponseSchema,
      errors: [400, LIMIT_EXCEEDED_STATUS[variant], 402],
    },
    { method: 'get', path: '/api/v1/batch/{batch_id}', summary: 'A batch record', ok: batchRecordSchema, errors: [404] },
    {
      method: 'post',
      path: '/api/v1/license/verify',
      summary: 'Check (and activate) a licence key',
      json: z.object({ license_key: z.string().min(1) }),
      ok: schemas.licenseVerify,
      errors: [400, 402],
    },
    { method: 'get', path: '/api/v1/license/info', summary: 'The licence in force', ok: schemas.licenseInfo },
  ]
}
