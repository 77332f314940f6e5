import {
  batchCompressFieldSpecs,
  COMPRESS_PRESETS,
  describeCondition,
  describeRule,
  IMAGE_EXTENSIONS,
  implementedEndpoints,
  operationForm,
  type FieldCondition,
  type FieldSpec,
  type FormBody,
} from '@mos/sdk/contract'
import type { ServiceContext } from '../context.ts'

/** A form field as the console draws it: the contract's spec (the one the server validates with), in plain JSON. */
export interface ConsoleField {
  name: string
  kind: FieldSpec['kind']
  required: boolean
  default: string | number | boolean | null
  min: number | null
  max: number | null
  /** The least value itself is refused (a share: above 0). */
  min_exclusive: boolean
  choices: string[] | null
  /** A Mos extension beyond the published interface. */
  extension: boolean
  /** Sent only when another field has this value (e.g. Draco's quantization bits); null: always. */
  applies_when: FieldCondition | null
  /** Other ranges when another field has a value (quality of png). */
  alternatives: { when: FieldCondition; min: number | null; max: number | null; default: string | number | boolean | null }[]
  /**
   * What each choice of this field sets in the others the request leaves out (compress's `preset`), so a form
   * can show the values a preset brings; null for every other field.
   */
  presets: Readonly<Record<string, Readonly<Record<string, string | number | boolean>>>> | null
  description: string
}

/** The fields whose choices are bundles of other fields, by operation: the ones the submit's parser expands. */
const PRESET_FIELDS: Readonly<Record<string, Readonly<Record<string, ConsoleField['presets']>>>> = {
  compress: { preset: COMPRESS_PRESETS },
}

/** `must be one of a, b` → `One of a, b`. */
const sentence = (rule: string) =>
  rule
    .replace(/^must be (an? )?/, (_all, article: string | undefined) => (article ? `A${article.slice(1)}` : ''))
    .replace(/^./, (c) => c.toUpperCase())

/** JSON has no Infinity: an open bound is null. */
const bound = (value: number | undefined) => (value === undefined || !Number.isFinite(value) ? null : value)

function consoleField(
  spec: FieldSpec,
  alternatives: NonNullable<FormBody['alternatives']> = [],
  presets: ConsoleField['presets'] = null,
): ConsoleField {
  const numeric = spec.kind === 'integer' || spec.kind === 'number'
  const others = alternatives.flatMap(({ condition, specs }) => {
    const other = specs.find((candidate) => candidate.name === spec.name)
    if (!other || describeRule(other) === describeRule(spec)) return []
    const range =
      other.kind === 'integer' || other.kind === 'number' ? { min: bound(other.min), max: bound(other.max) } : { min: null, max: null }
    const text = `When ${condition.field} is ${condition.equals}: ${describeRule(other).replace(/^must be /, '')}.`
    return [{ alternative: { when: condition, ...range, default: other.default ?? null }, text }]
  })
  const onlyWith = spec.onlyWith ?? null
  return {
    name: spec.name,
    kind: spec.kind,
    required: spec.required === true,
    default: spec.default ?? null,
    min: numeric ? bound(spec.min) : null,
    max: numeric ? bound(spec.max) : null,
    min_exclusive: spec.kind === 'number' && spec.minExclusive === true,
    choices: spec.kind === 'enum' ? [...spec.values] : null,
    extension: spec.extension === true,
    applies_when: onlyWith,
    alternatives: others.map((other) => other.alternative),
    presets,
    description: [
      `${sentence(describeRule(spec))}${spec.default !== undefined ? `; default ${spec.default}` : ''}${spec.required ? '; required' : ''}.`,
      ...(onlyWith ? [`Only when ${describeCondition(onlyWith)}.`] : []),
      ...others.map((other) => other.text),
    ].join(' '),
  }
}

/** An unlimited figure (Infinity) is null in JSON. */
const finite = (value: number) => (Number.isFinite(value) ? value : null)
const mb = (bytes: number) => (Number.isFinite(bytes) ? Math.round((bytes / 1024 / 1024) * 100) / 100 : null)

/** The limits a console form must respect now: the tier's (or the trial's) under the settings. */
export async function limitsInForce(ctx: ServiceContext) {
  const limits = ctx.limits()
  const state = ctx.access.licensing.state()
  return {
    max_file_size_mb: mb(limits.maxFileBytes),
    max_batch_count: finite(limits.maxBatchCount),
    max_batch_size_mb: ctx.config.limits.maxBatchSizeMb,
    max_texture_size_mb: mb(limits.maxTextureBytes),
    tier: state.tier,
    license_status: state.status,
    trial: {
      active: state.status !== 'active',
      used_files: await ctx.access.licensing.trial.used(),
      max_files: ctx.access.licensing.trialMaxFiles,
    },
  }
}

/**
 * GET /config: the running deployment as the console's forms need it. Only the operations this
 * variant implements, each with its input formats (the engines' registry) and its fields (the
 * contract's specs, the ones submits are validated with): a form offers exactly what is accepted.
 */
export async function consoleConfigDocument(ctx: ServiceContext) {
  const operations = implementedEndpoints(ctx.variant).map((endpoint) => {
    const form = operationForm(endpoint.type, ctx.variant)
    const formats = [...ctx.processing.operations.formats(endpoint.type)]
    return {
      type: endpoint.type,
      path: endpoint.path,
      admin_path: `/admin/submit${endpoint.path}`,
      input_formats: formats,
      images: formats.some((format) => (IMAGE_EXTENSIONS as readonly string[]).includes(format)),
      fields: form.fields.map((spec) => consoleField(spec, form.alternatives, PRESET_FIELDS[endpoint.type]?.[spec.name] ?? null)),
    }
  })
  const limits = await limitsInForce(ctx)
  const compress = operations.find((operation) => operation.type === 'compress')
  return {
    variant: ctx.variant,
    version: ctx.version,
    operations,
    batch: compress
      ? {
          admin_path: '/admin/submit/batch/compress',
          input_formats: compress.input_formats,
          max_files: limits.max_batch_count,
          // The contract's batch fields: the batch's compress extensions are the API's, the console's
          // batch form stays as its page lays it out (engine and level).
          fields: batchCompressFieldSpecs()
            .filter((spec) => !spec.extension)
            .map((spec) => consoleField(spec)),
        }
      : null,
    limits,
  }
}
