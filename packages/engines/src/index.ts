// @mos/engines: pure model and texture processing; no other workspace package is imported here.

// Pool: run jobs on worker threads
export { createEnginePool, ENGINE_POOL_DEFAULTS, type EnginePool, type EnginePoolOptions, type RunOptions } from './pool.ts'
export { WORK_BUDGET_DEFAULTS, workBudgetMessage, workBudgetMs, type WorkBudget } from './work-budget.ts'
export type { ThreadRecyclingOptions } from './thread-recycling.ts'

// Jobs: what crosses into the worker and back
export type { EngineJob, EngineLogEntry, JobInput, JobName, JobResult, JobSuccess, JobFailure } from './jobs.ts'

// Formats
export { readableFormats, writableFormats, readModel, writeModel, FORMAT_CODECS, type FormatCodec, type WrittenModel } from './io/index.ts'
export { readFbx } from './io/fbx.ts'
export { readDae } from './io/dae.ts'
export type { AssimpReadOptions } from './io/assimp-read.ts'
export { ASSIMP_INPUT_LIMITS, type AssimpInputLimits } from './io/assimp-input-limits.ts'
export { assimpHeapBytes, ASSIMP_HEAP_KEEP_BYTES } from './io/assimp-module.ts'
export type { ImageFormat, RasterHeader } from './io/image.ts'
export { DEFAULT_MAX_ALLOCATION_BYTES, READ_DEFAULTS, type ReadOptions } from './io/limits.ts'

// Operations: the registry the worker dispatches from, one module per operation
export {
  OPERATIONS,
  OPERATION_NAMES,
  findOperation,
  operationFormats,
  parseOperationOptions,
  type OperationName,
} from './operations/index.ts'
export {
  defineOperation,
  type Operation,
  type OperationContext,
  type OperationInput,
  type OperationInputs,
  type OperationOutput,
} from './operations/operation.ts'
export { compress, COMPRESS_DEFAULTS, dracoSpeedForLevel, meshoptPositionBitsForLevel, type CompressOptions } from './ops/compress.ts'
export { KHRMeshoptCompression } from './ops/khr-meshopt-compression.ts'
export { optimizeScene, SIMPLIFY_DEFAULT_ERROR, type SceneOptions, type SceneResources } from './ops/optimize-scene.ts'
export { mergeMeshes, type MergeReport } from './ops/merge-meshes.ts'
export { paletteMaterials, PALETTE_MIN_MATERIALS, type PaletteReport } from './ops/palette-materials.ts'
export { instanceMeshes, type InstanceReport } from './ops/instance-meshes.ts'
export { simplifyMeshes, type SimplifyMeshesOptions, type SimplifyReport } from './ops/simplify-meshes.ts'
export { textureResize, resizedDimensions, type TextureResizeOptions } from './ops/texture-resize.ts'
export {
  textureOptimize,
  optimizeImage,
  TEXTURE_OPTIMIZE_DEFAULTS,
  type TextureOptimizeOptions,
  type SharpEncoder,
} from './ops/texture-optimize.ts'
export { textureKtx2, encodeImageKtx2, TEXTURE_KTX2_DEFAULTS, type TextureKtx2Options } from './ops/texture-ktx2.ts'
export { checkTextureLimits, TEXTURE_LIMITS_DEFAULTS, type TextureLimits } from './ops/texture-limits.ts'
export type { TextureReport } from './ops/texture-report.ts'
export { convertDocument, type ConvertOptions } from './ops/convert.ts'

// Platform: codecs loaded once per thread
export { loadPlatform, describeEngines, type Platform } from './platform.ts'
export type { BasisModule } from './basis-encoder.ts'

// Errors
export { ModelInputError, failureMessage } from './errors.ts'

// Geometry statistics
export { countSceneTriangles, countMeshTriangles, documentBounds } from './geometry-stats.ts'

// Repair and diagnose
export { repair, repairDocument, REPAIR_DEFAULTS, type RepairOptions, type RepairReport } from './ops/repair.ts'
export { diagnose, DIAGNOSE_DEFAULTS, type DiagnoseOptions, type IssueType } from './ops/diagnose.ts'
export { diagnoseBytes } from './ops/diagnose-file.ts'
export type {
  DiagnosisResult,
  MeshDiagnosis,
  TextureDiagnosis,
  AnimationDiagnosis,
  DiagnosisIssue,
  IssueSeverity,
} from './ops/diagnosis-types.ts'
export { loadGltfValidator, validateGltf, type GltfValidator, type GltfValidation } from './ops/gltf-validation.ts'
export { readImageHeader, type ImageHeader } from './io/image-header.ts'
