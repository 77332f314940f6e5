import { readableFormats } from '@mos/engines'
import {
  IMAGE_EXTENSIONS,
  OUTPUT_FORMATS,
  parseCompressFields,
  parseConvertFields,
  parseTextureKtx2Fields,
  parseTextureOptimizeFields,
  type CompressOptions,
  type ParseResult,
  type TaskType,
  type Variant,
} from '@mos/sdk/contract'
import type { ServiceContext } from '../context.ts'
import type { SubmitRoute } from './submit.ts'

/** Engine option names for a validated compress request (contract names → engine names). */
export function compressJobOptions(o: CompressOptions): Record<string, unknown> {
  return {
    engine: o.engine,
    level: o.level,
    positionBits: o.position_quantization_bits,
    normalBits: o.normal_quantization_bits,
    texcoordBits: o.texcoord_quantization_bits,
    colorBits: o.color_quantization_bits,
    genericBits: o.generic_quantization_bits,
    meshoptLevel: o.meshopt_compression_level,
  }
}

/** Model inputs: every format the engines read (zip bundles included once the format layer has them). */
const modelFormats = () => readableFormats()

/** Texture operations also take standalone images. */
const modelOrImageFormats = () => [...readableFormats(), ...IMAGE_EXTENSIONS]

/** Fields with no rules: the operation takes only the file. */
const noFields = (): ParseResult<object> => ({ ok: true, value: {} })

/** Texture jobs carry the tier's per-image limit (bytes; negative = unlimited). */
function withTextureLimit(parsed: ParseResult<object>, ctx: ServiceContext): ParseResult<object> {
  return parsed.ok ? { ok: true, value: { ...parsed.value, maxTextureBytes: ctx.limits().maxTextureBytes } } : parsed
}

/** The submit endpoints this deployment serves, per variant. */
export function submitRoutes(variant: Variant): SubmitRoute[] {
  return [
    {
      type: 'compress',
      path: '/compress',
      formats: modelFormats,
      parseFields: (raw) => {
        const parsed = parseCompressFields(variant, raw)
        return parsed.ok ? { ok: true, value: compressJobOptions(parsed.value) } : parsed
      },
    },
    {
      type: 'convert',
      path: '/convert',
      formats: modelFormats,
      // B's capabilities list no fbx/dae output, so B refuses those targets as unsupported formats.
      parseFields: (raw) => parseConvertFields(OUTPUT_FORMATS[variant], raw),
    },
    { type: 'repair', path: '/repair', formats: modelFormats, parseFields: noFields },
    {
      type: 'texture_optimize',
      path: '/textures/optimize',
      formats: modelOrImageFormats,
      parseFields: (raw, ctx) => withTextureLimit(parseTextureOptimizeFields(raw), ctx),
    },
    ...(variant === 'A'
      ? ([
          { type: 'diagnose', path: '/diagnose', formats: modelFormats, parseFields: noFields },
          {
            type: 'texture_ktx2',
            path: '/textures/ktx2',
            formats: modelOrImageFormats,
            parseFields: (raw, ctx) => withTextureLimit(parseTextureKtx2Fields(raw), ctx),
          },
        ] satisfies SubmitRoute[])
      : []),
  ]
}

/** Operations a variant reserves: their endpoints answer 501 (section 4.6, 4.8). */
export const RESERVED_ROUTES: Record<Variant, { path: string; what: TaskType }[]> = {
  A: [],
  B: [
    { path: '/diagnose', what: 'diagnose' },
    { path: '/textures/ktx2', what: 'texture_ktx2' },
  ],
}
