import { ModelInputError, ReaderFaultError } from '../errors.ts'
import { checkGltfInput } from '../io/gltf-limits.ts'
import type { ModelFile } from '../io/gltf-zip.ts'
import { type ModelReadOptions, readModel } from '../io/index.ts'
import type { Platform } from '../platform.ts'
import { diagnose, DIAGNOSE_DEFAULTS } from './diagnose.ts'
import type { DiagnosisResult } from './diagnosis-types.ts'
import { formatVersion } from './format-version.ts'
import { describeValidatorMessage, type GltfValidation, type GltfValidator, validateGltf } from './gltf-validation.ts'

/**
 * Refuses glTF input whose views or accessors reach past their buffer: glTF-Transform reads such
 * files without complaint, but what it reads there is not the file's data. Operations that write a
 * model (repair) call this before trusting the document.
 */
export async function refuseUnreadableGltf(validator: GltfValidator, bytes: Uint8Array, format: string): Promise<void> {
  if (format !== 'glb' && format !== 'gltf') return
  const validation = await validateGltf(validator, bytes, VALIDATOR_MAX_ISSUES).catch(() => null)
  if (validation?.fatal) throw new ModelInputError(`invalid glTF: ${describeValidatorMessage(validation.fatal)}`)
}

/**
 * The error to report for a model the format layer could not read. glTF-Transform's own messages for
 * malformed glTF are about its internals ("Cannot read properties of undefined (reading 'source')");
 * glTF-Validator's first error is about the file, so it replaces them. Other errors pass through.
 */
export async function explainedReadFailure(
  validator: GltfValidator,
  bytes: Uint8Array,
  format: string,
  error: unknown,
  validation?: GltfValidation | null,
): Promise<unknown> {
  if (error instanceof ModelInputError && !(error instanceof ReaderFaultError)) return error
  // The glTF the library was reading: the upload, or the .gltf inside a zip with its files.
  const gltf = error instanceof ReaderFaultError ? error.gltf : undefined
  if (!gltf && format !== 'glb' && format !== 'gltf') return error
  const report =
    gltf !== undefined && gltf.bytes !== bytes
      ? await validateGltf(validator, gltf.bytes, VALIDATOR_MAX_ISSUES, gltf.resources).catch(() => null)
      : validation === undefined
        ? await validateGltf(validator, bytes, VALIDATOR_MAX_ISSUES).catch(() => null)
        : validation
  return report?.firstError ? new ModelInputError(`invalid glTF: ${describeValidatorMessage(report.firstError)}`) : error
}

/** Validator messages kept per file: enough to show every kind of problem, bounded for huge files. */
export const VALIDATOR_MAX_ISSUES = 1000

/**
 * Diagnoses an uploaded file: for glTF input, Khronos glTF-Validator runs first; then the file is
 * read through the format layer and diagnosed. A file that cannot be read, or whose buffers the
 * validator finds too short for its views (what is read would not be the file's data), fails with
 * the reason instead of giving a diagnosis.
 */
export async function diagnoseBytes(
  platform: Platform,
  validator: GltfValidator,
  bytes: Uint8Array,
  format: string,
  options: { maxTextureSize?: unknown; maxAllocationBytes?: unknown; sharp?: ModelReadOptions['sharp'] } = {},
): Promise<DiagnosisResult> {
  const readOptions = typeof options.maxAllocationBytes === 'number' ? { maxAllocationBytes: options.maxAllocationBytes } : {}
  // Our own bounds first: glTF-Validator walks whatever the file declares (deep JSON overflowed its
  // stack; a sparse accessor of 10^9 entries kept it busy for minutes).
  checkGltfInput(bytes, format, readOptions)
  const validation =
    format === 'glb' || format === 'gltf' ? await validateGltf(validator, bytes, VALIDATOR_MAX_ISSUES).catch(() => null) : null
  let doc
  // A zip's model file: its format and version are what the diagnosis reports (contract 2.3: the model's).
  let model: ModelFile = { path: '', format, bytes }
  try {
    // With sharp, the GIF, TIFF and AVIF textures a model references or embeds are read as convert reads them, not reported as dropped.
    const sharp = options.sharp ? { sharp: options.sharp } : {}
    doc = await readModel(platform, bytes, format, { ...readOptions, ...sharp, onModelFile: (file) => (model = file) })
  } catch (error) {
    throw await explainedReadFailure(validator, bytes, format, error, validation)
  }
  if (validation?.fatal) throw new ModelInputError(`invalid glTF: ${describeValidatorMessage(validation.fatal)}`)
  const maxTextureSize = typeof options.maxTextureSize === 'number' ? options.maxTextureSize : DIAGNOSE_DEFAULTS.maxTextureSize
  return diagnose(doc, {
    format: model.format,
    version: formatVersion(model.format, model.bytes, doc),
    fileSizeBytes: bytes.byteLength,
    validation,
    maxTextureSize,
  })
}
