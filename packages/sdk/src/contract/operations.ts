import {
  parseCompressFields,
  parseConvertFields,
  parseTextureKtx2Fields,
  parseTextureOptimizeFields,
  type CompressOptions,
  type ConvertOptions,
  type ParseResult,
  type TextureKtx2Options,
  type TextureOptimizeOptions,
} from './fields.ts'
import { IMPLEMENTED_TASK_TYPES, OUTPUT_FORMATS, type Engine, type TaskType, type Variant } from './vocabulary.ts'

/** One submit endpoint of the contract (section 4): its task type, path, SDK call and field rules. */
export interface OperationEndpoint<T extends TaskType = TaskType, M extends string = string> {
  type: T
  /** Path under the API prefix. */
  path: string
  /** The SDK's call for it (`compress`, `optimizeTextures`, ...); `…AndWait` is derived from it. */
  method: M
  /** Validates the endpoint's form fields, filling defaults: the options of the task, in the contract's names. */
  parseFields(variant: Variant, raw: Record<string, string | undefined>): ParseResult<object>
}

/** Fields with no rules: the operation takes only the file. */
const noFields = (): ParseResult<object> => ({ ok: true, value: {} })

/**
 * Every submit endpoint, in the order of section 1's task types. The server's routes and the SDK's
 * calls are built from this table (and the engines' registry for the input formats): a new
 * operation is one entry here, one engine module and their tests. A variant that does not
 * implement an operation (`IMPLEMENTED_TASK_TYPES`) answers 501 on its path.
 */
export const OPERATION_ENDPOINTS = [
  { type: 'compress', path: '/compress', method: 'compress', parseFields: (variant, raw) => parseCompressFields(variant, raw) },
  // B's capabilities list no fbx/dae output, so B refuses those targets as unsupported formats.
  { type: 'convert', path: '/convert', method: 'convert', parseFields: (variant, raw) => parseConvertFields(OUTPUT_FORMATS[variant], raw) },
  { type: 'repair', path: '/repair', method: 'repair', parseFields: noFields },
  { type: 'diagnose', path: '/diagnose', method: 'diagnose', parseFields: noFields },
  {
    type: 'texture_optimize',
    path: '/textures/optimize',
    method: 'optimizeTextures',
    parseFields: (_variant, raw) => parseTextureOptimizeFields(raw),
  },
  { type: 'texture_ktx2', path: '/textures/ktx2', method: 'encodeKtx2', parseFields: (_variant, raw) => parseTextureKtx2Fields(raw) },
] as const satisfies readonly OperationEndpoint[]

/** The SDK call names of the submit endpoints. */
export type OperationMethod = (typeof OPERATION_ENDPOINTS)[number]['method']

/** The endpoints a variant serves (the others answer 501 there). */
export function implementedEndpoints(variant: Variant): (typeof OPERATION_ENDPOINTS)[number][] {
  return OPERATION_ENDPOINTS.filter((endpoint) => IMPLEMENTED_TASK_TYPES[variant].includes(endpoint.type))
}

/**
 * The fields a client sends to each submit endpoint, as the SDK types its params: what is
 * required, and the optional rest (the server fills their defaults).
 */
export interface OperationRequestFields {
  compress: { engine: Engine } & Partial<Omit<CompressOptions, 'engine'>>
  convert: ConvertOptions
  repair: Record<never, never>
  diagnose: Record<never, never>
  texture_optimize: Pick<TextureOptimizeOptions, 'format'> & Partial<Omit<TextureOptimizeOptions, 'format'>>
  texture_ktx2: Partial<TextureKtx2Options>
}
