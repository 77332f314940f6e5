import { ModelInputError } from '../errors.ts'
import { FORMAT_CODECS, writableFormats } from '../io/index.ts'

export interface ConvertOptions {
  /** Output format: glb, gltf (written as a zip), obj, stl, ply, or any other writer the registry holds. */
  target_format: string
  /** Allocation bound for reading the input (see `ReadOptions.maxAllocationBytes`). */
  maxAllocationBytes?: number
}

/** Validates convert options against the writers registered now; throws a ModelInputError with the reason. */
export function parseConvertOptions(options: Record<string, unknown>): ConvertOptions {
  const target = options.target_format
  if (typeof target !== 'string' || target === '') throw new ModelInputError('convert needs a target_format')
  const format = target.toLowerCase().replace(/^\./, '')
  if (!FORMAT_CODECS[format]?.write) {
    throw new ModelInputError(`unsupported target format: ${target} (writable: ${writableFormats().join(', ')})`)
  }
  const limit = options.maxAllocationBytes
  return { target_format: format, ...(typeof limit === 'number' ? { maxAllocationBytes: limit } : {}) }
}
