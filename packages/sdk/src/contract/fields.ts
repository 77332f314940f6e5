import { ERROR_TEXTS } from './errors.ts'
import {
  ENGINES,
  MESHOPT_LEVELS,
  MODEL_FORMATS,
  TEXTURE_FORMATS,
  type Engine,
  type MeshoptLevel,
  type ModelFormat,
  type TextureFormat,
  type Variant,
} from './vocabulary.ts'

/**
 * Declarative rules for the form fields of every submit endpoint (section 4). The server validates
 * with `parseFields`; the conformance suite walks the same specs to generate its bad-value checks.
 */
export type FieldSpec = (
  | { name: string; kind: 'integer'; required?: boolean; min: number; max: number; default?: number; onlyWith?: FieldCondition }
  | { name: string; kind: 'enum'; required?: boolean; values: readonly string[]; default?: string; unsupportedFormatError?: boolean; onlyWith?: FieldCondition }
  | { name: string; kind: 'boolean'; required?: boolean; default?: boolean }
) & {
  /**
   * A Mos extension, not in the published interface: optional, its default is the interface's
   * behaviour, and conformance checks it in the mos profile only (another deployment need not have it).
   */
  extension?: boolean
}

/** A field that only applies when another field has one value (e.g. Draco-only bits). */
export interface FieldCondition {
  field: string
  equals: string
}

export type FieldValues = Record<string, string | number | boolean | undefined>

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: string }

const DRACO = { field: 'engine', equals: 'draco' }
const MESHOPT = { field: 'engine', equals: 'meshopt' }

/** Field specs of POST /compress per variant (4.3). */
export function compressFieldSpecs(variant: Variant): FieldSpec[] {
  return [
    { name: 'engine', kind: 'enum', required: true, values: ENGINES },
    { name: 'level', kind: 'integer', min: variant === 'A' ? 1 : 0, max: 10, default: 7 },
    { name: 'position_quantization_bits', kind: 'integer', min: 8, max: 24, default: 14, onlyWith: DRACO },
    // Ranges below are "not shown" in the contract. 1..30 is what the Draco encoder accepts for
    // texcoords, colours and generic attributes; its octahedral normal coding needs 2 bits at least
    // (1 leaves the mesh uncompressed) and aborts at 30 (measured), so normals take 2..24.
    { name: 'normal_quantization_bits', kind: 'integer', min: 2, max: 24, default: 10, onlyWith: DRACO },
    { name: 'texcoord_quantization_bits', kind: 'integer', min: 1, max: 30, default: 12, onlyWith: DRACO },
    { name: 'color_quantization_bits', kind: 'integer', min: 1, max: 30, default: 8, onlyWith: DRACO },
    { name: 'generic_quantization_bits', kind: 'integer', min: 1, max: 30, default: 12, onlyWith: DRACO },
    { name: 'meshopt_compression_level', kind: 'enum', values: MESHOPT_LEVELS, default: 'high', onlyWith: MESHOPT },
  ]
}

/** Field specs of POST /convert (4.4). `targets` is the variant's accepted output formats. */
export function convertFieldSpecs(targets: readonly ModelFormat[] = MODEL_FORMATS): FieldSpec[] {
  return [{ name: 'target_format', kind: 'enum', required: true, values: targets, unsupportedFormatError: true }]
}

/** Field specs of POST /textures/optimize (4.7); quality's range depends on the format. */
export function textureOptimizeFieldSpecs(format?: string): FieldSpec[] {
  const png = format === 'png'
  return [
    { name: 'format', kind: 'enum', required: true, values: TEXTURE_FORMATS, unsupportedFormatError: true },
    { name: 'quality', kind: 'integer', min: 1, max: png ? 9 : 100, default: png ? 6 : 82 },
    // Normal maps stay lossless by default (JPEG/WebP artefacts show as lighting noise); true trades that for size.
    { name: 'lossy_normal_maps', kind: 'boolean', default: false, extension: true },
  ]
}

/** Field specs of POST /textures/ktx2 (4.8); quality's range depends on the mode. */
export function textureKtx2FieldSpecs(uastc = false): FieldSpec[] {
  return [
    { name: 'uastc', kind: 'boolean', default: false },
    { name: 'quality', kind: 'integer', min: uastc ? 0 : 1, max: uastc ? 4 : 255, default: uastc ? 2 : 128 },
  ]
}

/** Field specs of POST /batch/compress (4.11): level is 1..10 in both variants. */
export function batchCompressFieldSpecs(): FieldSpec[] {
  return [
    { name: 'engine', kind: 'enum', required: true, values: ENGINES },
    { name: 'level', kind: 'integer', min: 1, max: 10, default: 7 },
  ]
}

const INTEGER = /^[+-]?\d+$/
const TRUE = new Set(['true', '1', 'yes', 'on'])
const FALSE = new Set(['false', '0', 'no', 'off'])

/** Describes the accepted values of a field, as used in the 400 text. */
export function describeRule(spec: FieldSpec): string {
  switch (spec.kind) {
    case 'integer':
      return `must be an integer from ${spec.min} to ${spec.max}`
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
export function parseFields(specs: FieldSpec[], raw: Record<string, string | undefined>): ParseResult<FieldValues> {
  const value: FieldValues = {}
  for (const spec of specs) {
    const given = raw[spec.name]
    const present = given !== undefined && given.trim() !== ''
    if (spec.kind !== 'boolean' && spec.onlyWith && raw[spec.onlyWith.field]?.trim().toLowerCase() !== spec.onlyWith.equals) {
      if (present) {
        return { ok: false, error: ERROR_TEXTS.invalidField(spec.name, `applies only when ${spec.onlyWith.field} is ${spec.onlyWith.equals}`) }
      }
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
}

export interface ConvertOptions {
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

/** Validates the fields of POST /compress. */
export function parseCompressFields(variant: Variant, raw: Record<string, string | undefined>): ParseResult<CompressOptions> {
  return parseFields(compressFieldSpecs(variant), raw) as ParseResult<CompressOptions>
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

/** Validates the fields of POST /batch/compress. */
export function parseBatchCompressFields(raw: Record<string, string | undefined>): ParseResult<{ engine: Engine; level: number }> {
  return parseFields(batchCompressFieldSpecs(), raw) as ParseResult<{ engine: Engine; level: number }>
}
