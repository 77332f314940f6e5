import { z } from 'zod'
import { ERROR_TEXTS } from './errors.ts'
import { COMPRESS_PRESET_NAMES, COMPRESS_PRESETS, type CompressPreset } from './presets.ts'
import {
  COMPRESS_TEXTURE_FORMATS,
  ENGINES,
  MESHOPT_EXTENSIONS,
  MESHOPT_LEVELS,
  MODEL_FORMATS,
  TEXTURE_FORMATS,
  type CompressTextureFormat,
  type Engine,
  type MeshoptExtension,
  type MeshoptLevel,
  type ModelFormat,
  type TaskType,
  type TextureFormat,
  type Variant,
} from './vocabulary.ts'

/**
 * Rules of one form field as the parser and the conformance suite read them, derived from the
 * endpoint's zod declaration (`fieldSpecs`). The server validates with `parseFields`; the
 * conformance suite walks the same specs to generate its bad-value checks.
 */
export type FieldSpec = (
  | { name: string; kind: 'integer'; required?: boolean; min: number; max: number; default?: number; onlyWith?: FieldCondition }
  | {
      name: string
      /** A decimal number (a share, a tolerance); `minExclusive` when the least value is above `min` (e.g. 0 < r ≤ 1). */
      kind: 'number'
      required?: boolean
      min: number
      max: number
      minExclusive?: boolean
      default?: number
      onlyWith?: FieldCondition
    }
  | {
      name: string
      kind: 'enum'
      required?: boolean
      values: readonly string[]
      default?: string
      unsupportedFormatError?: boolean
      onlyWith?: FieldCondition
    }
  | { name: string; kind: 'boolean'; required?: boolean; default?: boolean; onlyWith?: FieldCondition }
) & {
  /**
   * A Mos extension, not in the published interface: optional, its default is the interface's
   * behaviour, and conformance checks it in the mos profile only (another deployment need not have it).
   */
  extension?: boolean
}

/** A field that only applies when another field has one value (e.g. Draco-only bits), or one of several. */
export interface FieldCondition {
  field: string
  /** The other field's value, or its values (texture_quality: texture_format jpeg or webp). */
  equals: string | readonly string[]
  /** Applies too while the other field is not given (texture_progressive_jpeg: no texture_format, or jpeg). */
  orAbsent?: boolean
}

/** The values a condition lists. */
export function conditionValues(condition: FieldCondition): readonly string[] {
  return typeof condition.equals === 'string' ? [condition.equals] : condition.equals
}

/**
 * Whether a condition holds for the other field's raw value (trimmed, any case; empty is not given).
 *
 * ```ts
 * conditionHolds({ field: 'texture_format', equals: ['jpeg', 'webp'] }, 'WebP') // true
 * ```
 */
export function conditionHolds(condition: FieldCondition, raw: string | undefined): boolean {
  const value = raw?.trim().toLowerCase() ?? ''
  if (value === '') return condition.orAbsent === true
  return conditionValues(condition).includes(value)
}

/**
 * A condition in words, as the 400 text and the documents say it.
 *
 * ```ts
 * describeCondition({ field: 'texture_format', equals: ['jpeg'], orAbsent: true }) // 'texture_format is jpeg or not given'
 * ```
 */
export function describeCondition(condition: FieldCondition): string {
  const values = conditionValues(condition).join(' or ')
  return `${condition.field} is ${values}${condition.orAbsent ? ' or not given' : ''}`
}

/** What a form field declares beyond its zod type (kept in zod's metadata). */
export type FieldMeta = {
  onlyWith?: FieldCondition
  /** A value outside the list answers the contract's unsupported-format text (a target format). */
  unsupportedFormatError?: boolean
  /** A Mos extension (see `FieldSpec.extension`). */
  extension?: boolean
}

/**
 * The form fields of one endpoint as zod schemas, in the order their rules are checked: `z.int()`
 * with a min and a max, `z.enum`, `z.boolean`; `.default()` makes a field optional; `.meta()`
 * carries its `FieldMeta`. Declared in zod (the contract's one schema language), parsed by
 * `parseFields`, whose messages are the contract's texts rather than zod's.
 */
export type FieldShape = Record<string, z.ZodType>

export type FieldValues = Record<string, string | number | boolean | undefined>

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: string }

const DRACO = { field: 'engine', equals: 'draco' }
const MESHOPT = { field: 'engine', equals: 'meshopt' }
const integer = (min: number, max: number) => z.int().min(min).max(max)
const onlyWith = (condition: FieldCondition): FieldMeta => ({ onlyWith: condition })
const TEXTURE_FORMAT_JPEG_OR_NONE: FieldCondition = { field: 'texture_format', equals: ['jpeg'], orAbsent: true }
const TEXTURE_FORMAT_LOSSY: FieldCondition = { field: 'texture_format', equals: ['jpeg', 'webp'] }
const TEXTURE_FORMAT_NORMAL_MAPS: FieldCondition = { field: 'texture_format', equals: ['jpeg', 'webp', 'ktx2'] }

/** The rules of each field of `shape`, read from its zod declaration. */
export function fieldSpecs(shape: FieldShape): FieldSpec[] {
  return Object.entries(shape).map(([name, declared]) => {
    const meta = (z.globalRegistry.get(declared) ?? {}) as FieldMeta
    let schema: z.ZodType = declared
    let fallback: unknown
    if (schema instanceof z.ZodDefault) {
      fallback = schema.def.defaultValue
      schema = schema.unwrap() as z.ZodType
    }
    const required = fallback === undefined && !(schema instanceof z.ZodOptional)
    if (schema instanceof z.ZodOptional) schema = schema.unwrap() as z.ZodType
    const need = required ? { required: true } : {}
    const defaults = fallback !== undefined ? { default: fallback } : {}
    const condition = meta.onlyWith ? { onlyWith: meta.onlyWith } : {}
    const extension = meta.extension ? { extension: true } : {}
    if (schema instanceof z.ZodNumber) {
      const range = { min: schema.minValue ?? -Infinity, max: schema.maxValue ?? Infinity }
      const number = { ...need, ...range, ...(defaults as { default?: number }), ...condition, ...extension }
      if (schema.isInt) return { name, kind: 'integer', ...number }
      return { name, kind: 'number', ...number, ...(exclusiveMinimum(schema) ? { minExclusive: true } : {}) }
    }
    if (schema instanceof z.ZodEnum) {
      const values = schema.options.map(String)
      const format = meta.unsupportedFormatError ? { unsupportedFormatError: true } : {}
      return { name, kind: 'enum', ...need, values, ...(defaults as { default?: string }), ...format, ...condition, ...extension }
    }
    if (schema instanceof z.ZodBoolean)
      return { name, kind: 'boolean', ...need, ...(defaults as { default?: boolean }), ...condition, ...extension }
    throw new Error(`form field ${name}: only integers, enums and booleans are declared`)
  })
}

/** Whether a number's least bound is exclusive (declared with `.gt()`/`.positive()`). */
function exclusiveMinimum(schema: z.ZodNumber): boolean {
  return (schema.def.checks ?? []).some((check) => {
    const def = check._zod.def as { check: string; inclusive?: boolean }
    return def.check === 'greater_than' && def.inclusive === false
  })
}

const extension = { extension: true } satisfies FieldMeta

/**
 * Mos extensions of POST /compress (docs/api.md, "Mos extensions"): optional, and absent means the
 * interface's behaviour, so both variants stay as published. `preset` names a bundle of them
 * (`COMPRESS_PRESETS`); an explicit field wins over its preset's value.
 */
const compressExtensionFields = {
  preset: z.enum(COMPRESS_PRESET_NAMES).optional().meta(extension),
  simplify_ratio: z.number().gt(0).max(1).optional().meta(extension),
  simplify_error: z.number().min(0).max(1).optional().meta(extension),
  texture_max_size: integer(16, 16384).optional().meta(extension),
  texture_power_of_two: z.boolean().default(false).meta(extension),
  // Before the fields that depend on it, so a bad texture_format is named as such (rules are checked in order).
  texture_format: z.enum(COMPRESS_TEXTURE_FORMATS).optional().meta(extension),
  // texture_format's JPEG is progressive already where smaller (mozjpeg's scans), and a JPEG another
  // format keeps is re-coded with progressive tried: only with no texture_format does this choose.
  texture_progressive_jpeg: z
    .boolean()
    .default(false)
    .meta({ ...onlyWith(TEXTURE_FORMAT_JPEG_OR_NONE), ...extension }),
  // texture_optimize's quality range and default; KTX2 has its own scale (ETC1S 1–255), PNG is lossless.
  texture_quality: integer(1, 100)
    .default(82)
    .meta({ ...onlyWith(TEXTURE_FORMAT_LOSSY), ...extension }),
  // texture_optimize's field; with ktx2, normal maps ETC1S like the colour textures rather than UASTC.
  lossy_normal_maps: z
    .boolean()
    .default(false)
    .meta({ ...onlyWith(TEXTURE_FORMAT_NORMAL_MAPS), ...extension }),
  palette: z.boolean().default(false).meta(extension),
  merge: z.boolean().default(false).meta(extension),
  instance: z.boolean().default(false).meta(extension),
} satisfies FieldShape

/**
 * Mos extensions of POST /convert: the scene steps of compress that make sense for any target
 * (simplify, texture resize, merge), absent by default so a convert without them is the interface's.
 * Not `instance` (only glTF targets hold EXT_mesh_gpu_instancing), `palette` (what it saves is a glTF
 * renderer's draw calls) nor `preset` (compress's bundles, which name encoder intents).
 */
const convertExtensionFields = {
  simplify_ratio: compressExtensionFields.simplify_ratio,
  simplify_error: compressExtensionFields.simplify_error,
  texture_max_size: compressExtensionFields.texture_max_size,
  texture_power_of_two: z.boolean().optional().meta(extension),
  merge: z.boolean().optional().meta(extension),
} satisfies FieldShape

/** Fields of POST /compress per variant (4.3), then Mos's extensions. */
function compressFields(variant: Variant) {
  return {
    engine: z.enum(ENGINES),
    level: integer(variant === 'A' ? 1 : 0, 10).default(7),
    position_quantization_bits: integer(8, 24).default(14).meta(onlyWith(DRACO)),
    // Ranges below are "not shown" in the contract. 1..30 is what the Draco encoder accepts for
    // texcoords, colours and generic attributes; its octahedral normal coding needs 2 bits at least
    // (1 leaves the mesh uncompressed) and aborts at 30 (measured), so normals take 2..24.
    normal_quantization_bits: integer(2, 24).default(10).meta(onlyWith(DRACO)),
    texcoord_quantization_bits: integer(1, 30).default(12).meta(onlyWith(DRACO)),
    color_quantization_bits: integer(1, 30).default(8).meta(onlyWith(DRACO)),
    generic_quantization_bits: integer(1, 30).default(12).meta(onlyWith(DRACO)),
    meshopt_compression_level: z.enum(MESHOPT_LEVELS).default('high').meta(onlyWith(MESHOPT)),
    meshopt_extension: z
      .enum(MESHOPT_EXTENSIONS)
      .default('ext')
      .meta({ ...onlyWith(MESHOPT), ...extension }),
    ...compressExtensionFields,
  } satisfies FieldShape
}

const declaredSpecs = new Map<string, readonly FieldSpec[]>()

/**
 * The specs of one declaration, read from its zod schemas once: every submission is parsed against
 * them, and building and reading back the schemas cost ~0.6 ms per compress request (measured),
 * against ~5 µs for the parse itself.
 */
function specsOnce(key: string, declare: () => FieldShape): readonly FieldSpec[] {
  let specs = declaredSpecs.get(key)
  if (!specs) declaredSpecs.set(key, (specs = Object.freeze(fieldSpecs(declare()))))
  return specs
}

/** Field specs of POST /compress per variant (4.3). */
export function compressFieldSpecs(variant: Variant): readonly FieldSpec[] {
  return specsOnce(`compress:${variant}`, () => compressFields(variant))
}

/**
 * The Mos extension fields of each endpoint that has any, as capabilities list them under
 * `mos_extensions` (a key neither variant's document has, so both keep their published shape).
 */
export function extensionFieldNames(variant: Variant): Partial<Record<TaskType, string[]>> {
  const names = (specs: readonly FieldSpec[]) => specs.filter((spec) => spec.extension).map((spec) => spec.name)
  return {
    compress: names(compressFieldSpecs(variant)),
    convert: names(convertFieldSpecs()),
    texture_optimize: names(textureOptimizeFieldSpecs()),
  }
}

/** Field specs of POST /convert (4.4). `targets` is the variant's accepted output formats. */
export function convertFieldSpecs(targets: readonly ModelFormat[] = MODEL_FORMATS): readonly FieldSpec[] {
  return specsOnce(`convert:${targets.join(',')}`, () => ({
    target_format: z.enum(targets).meta({ unsupportedFormatError: true }),
    ...convertExtensionFields,
  }))
}

/** Field specs of POST /textures/optimize (4.7); quality's range depends on the format. */
export function textureOptimizeFieldSpecs(format?: string): readonly FieldSpec[] {
  const png = format === 'png'
  return specsOnce(`texture_optimize:${png}`, () => ({
    format: z.enum(TEXTURE_FORMATS).meta({ unsupportedFormatError: true }),
    quality: integer(1, png ? 9 : 100).default(png ? 6 : 82),
    // Normal maps stay lossless by default (JPEG/WebP artefacts show as lighting noise); true trades that for size.
    lossy_normal_maps: z.boolean().default(false).meta({ extension: true }),
  }))
}

/** Field specs of POST /textures/ktx2 (4.8); quality's range depends on the mode. */
export function textureKtx2FieldSpecs(uastc = false): readonly FieldSpec[] {
  return specsOnce(`texture_ktx2:${uastc}`, () => ({
    uastc: z.boolean().default(false),
    quality: uastc ? integer(0, 4).default(2) : integer(1, 255).default(128),
  }))
}

/** The fields the contract's batch table has (4.11); the batch's other fields are Mos's. */
const BATCH_CONTRACT_FIELDS = new Set(['engine', 'level'])

/**
 * Field specs of POST /batch/compress (4.11): compress's fields, each file being a compress task,
 * with level 1..10 in both variants (variant A's compress range). The contract's batch table has
 * engine and level only; the others are Mos extensions there, with compress's rules: a batch took
 * them unvalidated and dropped them, so `position_quantization_bits=30` answered 200 and was ignored.
 */
export function batchCompressFieldSpecs(): readonly FieldSpec[] {
  let specs = declaredSpecs.get('batch_compress')
  if (!specs) {
    const asExtension = (spec: FieldSpec): FieldSpec => (BATCH_CONTRACT_FIELDS.has(spec.name) ? spec : { ...spec, extension: true })
    specs = Object.freeze(compressFieldSpecs('A').map(asExtension))
    declaredSpecs.set('batch_compress', specs)
  }
  return specs
}

const INTEGER = /^[+-]?\d+$/
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i
const TRUE = new Set(['true', '1', 'yes', 'on'])
const FALSE = new Set(['false', '0', 'no', 'off'])

/** Describes the accepted values of a field, as used in the 400 text. */
export function describeRule(spec: FieldSpec): string {
  switch (spec.kind) {
    case 'integer':
      return `must be an integer from ${spec.min} to ${spec.max}`
    case 'number':
      return spec.minExclusive
        ? `must be a number above ${spec.min} and at most ${spec.max}`
        : `must be a number from ${spec.min} to ${spec.max}`
    case 'enum':
      return `must be one of ${spec.values.join(', ')}`
    case 'boolean':
      return 'must be true or false'
  }
}

function parseOne(spec: FieldSpec, raw: string): ParseResult<string | number | boolean> {
  const text = raw.trim()
  switch (spec.kind) {
    case 'integer': {
      const n = Number(text)
      if (!INTEGER.test(text) || n < spec.min || n > spec.max) {
        return { ok: false, error: ERROR_TEXTS.invalidField(spec.name, describeRule(spec)) }
      }
      return { ok: true, value: n }
    }
    case 'number': {
      const n = Number(text)
      if (!DECIMAL.test(text) || n > spec.max || n < spec.min || (spec.minExclusive && n === spec.min)) {
        return { ok: false, error: ERROR_TEXTS.invalidField(spec.name, describeRule(spec)) }
      }
      return { ok: true, value: n }
    }
    case 'enum': {
      const value = text.toLowerCase()
      if (!spec.values.includes(value)) {
        const error = spec.unsupportedFormatError
          ? ERROR_TEXTS.unsupportedFormat(text)
          : ERROR_TEXTS.invalidField(spec.name, describeRule(spec))
        return { ok: false, error }
      }
      return { ok: true, value }
    }
    case 'boolean': {
      const value = text.toLowerCase()
      if (TRUE.has(value)) return { ok: true, value: true }
      if (FALSE.has(value)) return { ok: true, value: false }
      return { ok: false, error: ERROR_TEXTS.invalidField(spec.name, describeRule(spec)) }
    }
  }
}

/**
 * Validates raw form values against specs, filling defaults. The first broken rule wins, in spec
 * order, so the same request always gets the same message. An empty string counts as absent.
 */
export function parseFields(specs: readonly FieldSpec[], raw: Record<string, string | undefined>): ParseResult<FieldValues> {
  const value: FieldValues = {}
  for (const spec of specs) {
    const given = raw[spec.name]
    const present = given !== undefined && given.trim() !== ''
    if (spec.onlyWith && !conditionHolds(spec.onlyWith, raw[spec.onlyWith.field])) {
      if (present) return { ok: false, error: ERROR_TEXTS.invalidField(spec.name, `applies only when ${describeCondition(spec.onlyWith)}`) }
      continue
    }
    if (!present) {
      if (spec.required) return { ok: false, error: ERROR_TEXTS.missingField(spec.name) }
      value[spec.name] = spec.default
      continue
    }
    const parsed = parseOne(spec, given)
    if (!parsed.ok) return parsed
    value[spec.name] = parsed.value
  }
  return { ok: true, value }
}

/** Options of a compress task, after validation and defaults. */
export interface CompressOptions {
  engine: Engine
  level: number
  position_quantization_bits?: number
  normal_quantization_bits?: number
  texcoord_quantization_bits?: number
  color_quantization_bits?: number
  generic_quantization_bits?: number
  meshopt_compression_level?: MeshoptLevel
  /** Mos extension: `khr` declares meshopt's data with KHR_meshopt_compression and its v1 vertex codec (smaller); default `ext`. */
  meshopt_extension?: MeshoptExtension
  /** Mos extension: a named bundle of the fields below (`COMPRESS_PRESETS`); explicit fields win. */
  preset?: CompressPreset
  /** Mos extension: target share of triangles to keep (0 < r ≤ 1), with meshoptimizer's simplifier. */
  simplify_ratio?: number
  /** Mos extension: largest simplification error, relative to the mesh's extent (0–1). */
  simplify_error?: number
  /** Mos extension: longest texture side in pixels (16–16384); larger textures are resized. */
  texture_max_size?: number
  /** Mos extension: textures resized to power-of-two sides (WebGL 1, mipmaps). */
  texture_power_of_two?: boolean
  /** Mos extension: every texture re-encoded to this format (absent: each kept in its own, re-coded losslessly). */
  texture_format?: CompressTextureFormat
  /** Mos extension: JPEG textures re-coded losslessly as progressive JPEGs where that is smaller (no texture_format, or jpeg). */
  texture_progressive_jpeg?: boolean
  /** Mos extension: JPEG and WebP quality (1–100, default 82) of `texture_format`'s re-encoding. */
  texture_quality?: number
  /** Mos extension: normal maps re-encoded lossy like the others by `texture_format` (jpeg, webp; ETC1S with ktx2). */
  lossy_normal_maps?: boolean
  /** Mos extension: untextured materials gathered into palette textures, so merge joins across them. */
  palette?: boolean
  /** Mos extension: meshes sharing a material joined, unanimated nodes flattened (gltfpack's default). */
  merge?: boolean
  /** Mos extension: meshes drawn by several nodes written once with EXT_mesh_gpu_instancing. */
  instance?: boolean
}

/** Options of a convert task: its target, and the compress scene fields it takes too (`convertExtensionFields`). */
export interface ConvertOptions
  extends Pick<CompressOptions, 'simplify_ratio' | 'simplify_error' | 'texture_max_size' | 'texture_power_of_two' | 'merge'> {
  target_format: ModelFormat
}

export interface TextureOptimizeOptions {
  format: TextureFormat
  quality: number
  /** Mos extension: normal maps re-encoded lossy like the other textures (default false: kept lossless). */
  lossy_normal_maps: boolean
}

export interface TextureKtx2Options {
  uastc: boolean
  quality: number
}

/**
 * Validates the fields of POST /compress. A known `preset` first fills the fields it sets that the
 * request left out (an explicit field wins); an unknown one is refused by its own rule.
 */
export function parseCompressFields(variant: Variant, raw: Record<string, string | undefined>): ParseResult<CompressOptions> {
  const specs = compressFieldSpecs(variant)
  return parseFields(specs, withPreset(specs, raw)) as ParseResult<CompressOptions>
}

/**
 * The raw fields with those of a known `preset` filled in where the request left them out and where
 * they apply to the request: `preset=web` with `texture_format=webp` sets no texture_progressive_jpeg
 * (which applies only to JPEG), rather than have the request refused for a field it did not send.
 */
function withPreset(specs: readonly FieldSpec[], raw: Record<string, string | undefined>): Record<string, string | undefined> {
  const name = raw.preset?.trim().toLowerCase() ?? ''
  // Own keys only: "constructor" is no preset, and is refused by the field's rule.
  const preset = Object.hasOwn(COMPRESS_PRESETS, name) ? (COMPRESS_PRESETS[name as CompressPreset] as Record<string, unknown>) : undefined
  if (!preset) return raw
  const given = Object.fromEntries(Object.entries(raw).filter(([, value]) => value !== undefined && value.trim() !== ''))
  const applies = (field: string) => {
    const condition = specs.find((spec) => spec.name === field)?.onlyWith
    return !condition || conditionHolds(condition, given[condition.field])
  }
  const filled = Object.entries(preset).filter(([field]) => applies(field))
  return { ...Object.fromEntries(filled.map(([k, v]) => [k, String(v)])), ...given }
}

/** Validates the fields of POST /convert. */
export function parseConvertFields(targets: readonly ModelFormat[], raw: Record<string, string | undefined>): ParseResult<ConvertOptions> {
  return parseFields(convertFieldSpecs(targets), raw) as ParseResult<ConvertOptions>
}

/** Validates the fields of POST /textures/optimize. */
export function parseTextureOptimizeFields(raw: Record<string, string | undefined>): ParseResult<TextureOptimizeOptions> {
  return parseFields(textureOptimizeFieldSpecs(raw.format?.trim().toLowerCase()), raw) as ParseResult<TextureOptimizeOptions>
}

/** Validates the fields of POST /textures/ktx2. */
export function parseTextureKtx2Fields(raw: Record<string, string | undefined>): ParseResult<TextureKtx2Options> {
  const mode = parseFields([textureKtx2FieldSpecs()[0]!], raw)
  if (!mode.ok) return mode
  return parseFields(textureKtx2FieldSpecs(mode.value.uastc === true), raw) as ParseResult<TextureKtx2Options>
}

/** Validates the fields of POST /batch/compress: compress's rules and preset, level 1..10. */
export function parseBatchCompressFields(raw: Record<string, string | undefined>): ParseResult<CompressOptions> {
  const specs = batchCompressFieldSpecs()
  return parseFields(specs, withPreset(specs, raw)) as ParseResult<CompressOptions>
}
