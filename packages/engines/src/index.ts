// @mos/engines: pure model and texture processing; no other workspace package is imported here.

// Pool: run jobs on worker threads
export { createEnginePool, ENGINE_POOL_DEFAULTS } from './pool.ts'
export type { EnginePool, EnginePoolOptions, RunOptions } from './pool.ts'

// Jobs: what crosses into the worker and back
export { JOB_NAMES } from './jobs.ts'
export type { EngineJob, JobInput, JobName, JobResult, JobSuccess, JobFailure } from './jobs.ts'

// Formats
export { readableFormats, writableFormats, readModel, writeModel, FORMAT_CODECS } from './io/index.ts'
export { isGlb } from './io/gltf.ts'
export { DEFAULT_MAX_ALLOCATION_BYTES, READ_DEFAULTS } from './io/limits.ts'
export type { ReadOptions } from './io/limits.ts'
export type { FormatCodec, WrittenModel } from './io/index.ts'

// Operations
export { compress, COMPRESS, COMPRESS_DEFAULTS, dracoSpeedForLevel, meshoptPositionBitsForLevel } from './ops/compress.ts'
export type { CompressOptions } from './ops/compress.ts'
export { convertDocument, parseConvertOptions } from './ops/convert.ts'
export type { ConvertOptions } from './ops/convert.ts'

// Platform: codecs loaded once per thread
export { loadPlatform, describeEngines, installedVersion } from './platform.ts'
export type { Platform } from './platform.ts'

// Errors
export { ModelInputError, failureMessage } from './errors.ts'

// Geometry statistics
export { countSceneTriangles, countMeshTriangles, documentBounds, primitiveTriangles } from './geometry-stats.ts'
