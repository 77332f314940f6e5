import { z } from 'zod'
import { batchRecordSchema, errorBodySchema, submitResponseSchema, taskRecordSchema } from './documents.ts'
import { textureReportSchema } from './task-reports.ts'
import { describeCondition, type FieldSpec } from './fields.ts'
import { apiRoutes, type ApiRoute, type ApiRouteOptions, type FormBody } from './openapi-routes.ts'
import { API_KEY_HEADER, type Variant } from './vocabulary.ts'

/** A JSON Schema / OpenAPI object, as plain JSON. */
type Json = Record<string, unknown>

/** Marks what the published interface does not have. */
export const EXTENSION_MARK = 'x-mos-extension'

/**
 * Documents shared by several paths, kept once under `components.schemas` (and named types in
 * generated clients): every other place they occur refers to them (`$ref`).
 */
const NAMED_SCHEMAS = new Map<z.ZodType, string>([
  [taskRecordSchema, 'TaskRecord'],
  [submitResponseSchema, 'SubmitResponse'],
  [batchRecordSchema, 'BatchRecord'],
  [textureReportSchema, 'TextureReport'],
])

/** What each error status means, as the documents describe it (the texts are in docs/api.md). */
const ERROR_MEANINGS: Record<number, string> = {
  400: 'A field or parameter is missing or breaks its rule; the file format is not one the operation takes.',
  401: 'Missing or wrong X-API-Key.',
  402: 'Licence required: trial used up, or (variant B) a limit of the tier exceeded.',
  404: 'Unknown id (or another key’s).',
  409: 'The task is not in a state that allows this.',
  413: 'A limit of the licence tier exceeded (file size, batch count).',
  429: 'Rate limit: too many requests per minute for this key.',
  501: 'Not implemented in this variant.',
}

export interface OpenApiOptions extends ApiRouteOptions {
  /** The service version the document describes (`info.version`). */
  version: string
}

/**
 * The OpenAPI 3.1 document of one variant, generated from the contract's zod declarations: every
 * path of `apiRoutes`, form fields with the variant's ranges, response documents and error bodies;
 * Mos extensions carry `x-mos-extension: true`.
 * @example
 * const document = openApiDocument('A', { version: '0.1.0' })
 */
export function openApiDocument(variant: Variant, options: OpenApiOptions): Json {
  const paths: Record<string, Record<string, Json>> = {}
  for (const route of apiRoutes(variant, options)) {
    const entry = (paths[route.path] ??= {})
    entry[route.method] = operation(route, variant)
  }
  return {
    openapi: '3.1.0',
    info: {
      title: `Mos API (variant ${variant})`,
      version: options.version,
      description:
        `The HTTP interface of Mos, a self-hosted 3D-model optimization service, in variant ${variant} of the published ` +
        `interface. Operations marked \`${EXTENSION_MARK}\` are Mos extensions, not in the published interface.`,
      'x-mos-variant': variant,
    },
    security: [{ ApiKey: [] }],
    components: {
      securitySchemes: { ApiKey: { type: 'apiKey', in: 'header', name: API_KEY_HEADER } },
      schemas: {
        Error: jsonSchema(errorBodySchema),
        ...Object.fromEntries([...NAMED_SCHEMAS].map(([schema, name]) => [name, jsonSchema(schema)])),
      },
    },
    paths,
  }
}

function operation(route: ApiRoute, variant: Variant): Json {
  const parameters = [...pathParameters(route.path), ...queryParameters(route.query)]
  const errors = [...(route.public ? [] : [401]), ...(route.errors ?? []), ...(variant === 'A' && !route.public ? [429] : [])]
  return {
    operationId: operationId(route),
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    ...(route.extension ? { [EXTENSION_MARK]: true } : {}),
    ...(route.public ? { security: [] } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(route.form ? { requestBody: { required: true, content: { 'multipart/form-data': { schema: formSchema(route.form) } } } } : {}),
    ...(route.json ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(route.json) } } } } : {}),
    responses: {
      ...okResponse(route),
      ...Object.fromEntries(
        [...new Set(errors)]
          .sort()
          .map((status) => [
            String(status),
            { description: ERROR_MEANINGS[status], content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
          ]),
      ),
    },
  }
}

function okResponse(route: ApiRoute): Json {
  if (route.ok instanceof z.ZodNever) return {}
  if (route.ok instanceof z.ZodType) {
    const name = NAMED_SCHEMAS.get(route.ok)
    const schema = name ? { $ref: `#/components/schemas/${name}` } : jsonSchema(route.ok)
    return { 200: { description: 'OK', content: { 'application/json': { schema } } } }
  }
  const schema = route.ok.binary ? { type: 'string', contentMediaType: route.ok.mediaType } : { type: 'string' }
  return { 200: { description: route.ok.description, content: { [route.ok.mediaType]: { schema } } } }
}

/** `get /api/v1/tasks/{task_id}/download` → `getTasksTaskIdDownload`. */
function operationId(route: ApiRoute): string {
  const words = route.path
    .replace(/^\/api\/v1\//, '')
    .split(/[/{}_.-]+/)
    .filter(Boolean)
  return route.method + words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join('')
}

function pathParameters(path: string): Json[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((match) => ({ name: match[1], in: 'path', required: true, schema: { type: 'string' } }))
}

function queryParameters(query: z.ZodObject | undefined): Json[] {
  if (!query) return []
  const schema = jsonSchema(query) as { properties?: Record<string, Json>; required?: string[] }
  return Object.entries(schema.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = property
    return { name, in: 'query', required: schema.required?.includes(name) ?? false, ...(description ? { description } : {}), schema: rest }
  })
}

/**
 * A zod schema as JSON Schema 2020-12 (OpenAPI 3.1's dialect), without the `$schema` line. Read as
 * input, with every object open (`additionalProperties: true`): response documents carry extra
 * fields the contract's silence allows (`expires_at`, `warnings`, repair counts), and generated
 * clients must accept them; zod's output view would forbid them.
 */
function jsonSchema(schema: z.ZodType): Json {
  const override = (context: { zodSchema: unknown; jsonSchema: Json }) => openOrNamed(context, schema)
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', override }) as Json
  return rest
}

/** A named document within another becomes a reference to its component; an object is left open. */
function openOrNamed(context: { zodSchema: unknown; jsonSchema: Json }, root: z.ZodType): void {
  const name = context.zodSchema === root ? undefined : NAMED_SCHEMAS.get(context.zodSchema as z.ZodType)
  if (name) {
    for (const key of Object.keys(context.jsonSchema)) delete context.jsonSchema[key]
    context.jsonSchema.$ref = `#/components/schemas/${name}`
  } else if (context.jsonSchema.type === 'object' && context.jsonSchema.additionalProperties === undefined)
    context.jsonSchema.additionalProperties = true
}

/** A multipart body from the field specs: one property per field, conditional rules described on it. */
function formSchema(form: FormBody): Json {
  const file = { type: 'string', contentMediaType: 'application/octet-stream', description: form.file.description }
  const properties: Record<string, Json> = { [form.file.name]: form.file.many ? { type: 'array', items: file } : file }
  const required = [form.file.name]
  for (const spec of form.fields) {
    const alternatives = (form.alternatives ?? []).flatMap(({ when, specs }) => {
      const other = specs.find((candidate) => candidate.name === spec.name)
      return other && describeRange(other) !== describeRange(spec) ? [`When ${when}: ${describeRange(other)}.`] : []
    })
    const only = spec.onlyWith ? [`Only when ${describeCondition(spec.onlyWith)}.`] : []
    const description = [...only, ...alternatives].join(' ')
    properties[spec.name] = {
      ...fieldSchema(spec),
      ...(description ? { description } : {}),
      ...(spec.extension ? { [EXTENSION_MARK]: true } : {}),
    }
    if (spec.required) required.push(spec.name)
  }
  return { type: 'object', properties, required }
}

function fieldSchema(spec: FieldSpec): Json {
  const fallback = spec.default !== undefined ? { default: spec.default } : {}
  switch (spec.kind) {
    case 'integer':
      return { type: 'integer', minimum: spec.min, maximum: spec.max, ...fallback }
    case 'number':
      return {
        type: 'number',
        ...(spec.minExclusive ? { exclusiveMinimum: spec.min } : { minimum: spec.min }),
        maximum: spec.max,
        ...fallback,
      }
    case 'enum':
      return { type: 'string', enum: [...spec.values], ...fallback }
    case 'boolean':
      return { type: 'boolean', ...fallback }
  }
}

function describeRange(spec: FieldSpec): string {
  const fallback = spec.default !== undefined ? `, default ${spec.default}` : ''
  switch (spec.kind) {
    case 'integer':
      return `${spec.min} to ${spec.max}${fallback}`
    case 'number':
      return `${spec.minExclusive ? 'above ' : ''}${spec.min} to ${spec.max}${fallback}`
    case 'enum':
      return `one of ${spec.values.join(', ')}${fallback}`
    case 'boolean':
      return `true or false${fallback}`
  }
}
