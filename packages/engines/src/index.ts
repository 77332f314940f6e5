// @mos/engines: pure model and texture processing; no other workspace package is imported here.

// Pool: run jobs on worker threads
export { createEnginePool, ENGINE_POOL_DEFAULTS } from './pool.ts'
export type { EnginePool, EnginePoolOptions, RunOptions } from './pool.ts'
export { WORK_BUDGET_DEFAULTS, workBudgetMessage, workBudgetMs } from './work-budget.ts'
export type { WorkBudget } from './work-budget.ts'
export type { ThreadRecyclingOptions } from './thread-recycling.ts'

// Jobs: what crosses into the worker and back
export type { EngineJob, EngineLogEntry, JobInput, JobName, JobResult, JobSuccess, JobFailure } from './jobs.ts'

// Formats
export { readableFormats, writableFormats, readModel, writeModel, FORMAT_CODECS } from './io/index.ts'
export { readFbx } from './io/fbx.ts'
export { readDae } from './io/dae.ts'
export type { AssimpReadOptions } from './io/assimp-read.ts'
export { ASSIMP_INPUT_LIMITS } from './io/assimp-input-limits.ts'
export type { AssimpInputLimits } from './io/assimp-input-limits.ts'
export { assimpHeapBytes, ASSIMP_HEAP_KEEP_BYTES } from './io/assimp-module.ts'
export type { ImageFormat, RasterHeader } from './io/image.ts'
export { DEFAULT_MAX_ALLOCATION_BYTES, READ_DEFAULTS } from './io/limits.ts'
export type { ReadOptions } from './io/limits.ts'
export type { FormatCodec, WrittenModel } from './io/index.ts'

// Operations: the registry the worker dispatches from, one module per operation
export { OPERATIONS, OPERATION_NAMES, findOperation, operationFormats, parseOperationOptions } from './operations/index.ts'
export type { OperationName } from './operations/index.ts'
export { defineOperation } from './operations/operation.ts'
export type { Operation, OperationContext, OperationInput, OperationInputs, OperationOutput } from './operations/operation.ts'
export { compress, COMPRESS_DEFAULTS, dracoSpeedForLevel, meshoptPositionBitsForLevel } from './ops/compress.ts'
export type { CompressOptions } from './ops/compress.ts'
export { optimizeScene, SIMPLIFY_DEFAULT_ERROR } from './ops/optimize-scene.ts'
export type { SceneOptions, SceneResources } from './ops/optimize-scene.ts'
export { mergeMeshes } from './ops/merge-meshes.ts'
export type { MergeReport } from './ops/merge-meshes.ts'
export { instanceMeshes } from './ops/instance-meshes.ts'
export type { InstanceReport } from './ops/instance-meshes.ts'
export { simplifyMeshes } from './ops/simplify-meshes.ts'
export type { SimplifyMeshesOptions, SimplifyReport } from './ops/simplify-meshes.ts'
export { textureResize, resizedDimensions } from './ops/texture-resize.ts'
export type { TextureResizeOptions } from './ops/texture-resize.ts'
export { textureOptimize, optimizeImage, TEXTURE_OPTIMIZE_DEFAULTS } from './ops/texture-optimize.ts'
export type { TextureOptimizeOptions, SharpEncoder } from './ops/texture-optimize.ts'
export { textureKtx2, encodeImageKtx2, TEXTURE_KTX2_DEFAULTS } from './ops/texture-ktx2.ts'
export type { TextureKtx2Options } from './ops/texture-ktx2.ts'
export { checkTextureLimits, TEXTURE_LIMITS_DEFAULTS } from './ops/texture-limits.ts'
export type { TextureLimits } from './ops/texture-limits.ts'
export type { TextureReport } from './ops/texture-report.ts'
export { convertDocument } from './ops/convert.ts'
export type { ConvertOptions } from './ops/convert.ts'

// Platform: codecs loaded once per thread
export { loadPlatform, describeEngines } from './platform.ts'
export type { Platform } from './platform.ts'
export type { BasisModule } from './basis-encoder.ts'

// Errors
export { ModelInputError, failureMessage } from './errors.ts'

// Geometry statistics
export { countSceneTriangles, countMeshTriangles, documentBounds } from './geometry-stats.ts'

// Repair and diagnose
export { repair, repairDocument, REPAIR_DEFAULTS } from './ops/repair.ts'
export type { RepairOptions, RepairReport } from './ops/repair.ts'
export { diagnose, DIAGNOSE_DEFAULTS } from './ops/diagnose.ts'
export type { DiagnoseOptions, IssueType } from './ops/diagnose.ts'
export { diagnoseBytes } from './ops/diagnose-file.ts'
export type {
  DiagnosisResult,
  MeshDiagnosis,
  TextureDiagnosis,
  AnimationDiagnosis,
  DiagnosisIssue,
  IssueSeverity,
} from './ops/diagnosis-types.ts'
export { loadGltfValidator, validateGltf } from './ops/gltf-validation.ts'
export type { GltfValidator, GltfValidation } from './ops/gltf-validation.ts'
export { readImageHeader } from './io/image-header.ts'
export type { ImageHeader } from './io/image-header.ts'
