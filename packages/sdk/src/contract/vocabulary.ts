/** The two published variants of the HTTP interface; one deployment serves one of them. */
export const VARIANTS = ['A', 'B'] as const
export type Variant = (typeof VARIANTS)[number]

/** Task types (operations), in the order of the contract's section 1. */
export const TASK_TYPES = ['compress', 'convert', 'repair', 'diagnose', 'texture_optimize', 'texture_ktx2'] as const
export type TaskType = (typeof TASK_TYPES)[number]

export const TASK_STATUSES = ['pending', 'processing', 'completed', 'failed'] as const
export type TaskStatus = (typeof TASK_STATUSES)[number]

/** Statuses after which a task never changes again. */
export const TERMINAL_TASK_STATUSES: readonly TaskStatus[] = ['completed', 'failed']

export const ENGINES = ['draco', 'meshopt'] as const
export type Engine = (typeof ENGINES)[number]

export const MODEL_FORMATS = ['glb', 'gltf', 'obj', 'fbx', 'stl', 'dae', 'ply'] as const
export type ModelFormat = (typeof MODEL_FORMATS)[number]

/** Output formats each variant advertises; variant B lists no fbx/dae writer in its capabilities. */
export const OUTPUT_FORMATS: Record<Variant, readonly ModelFormat[]> = {
  A: MODEL_FORMATS,
  B: ['glb', 'gltf', 'obj', 'stl', 'ply'],
}

export const TEXTURE_FORMATS = ['jpeg', 'webp', 'png'] as const
export type TextureFormat = (typeof TEXTURE_FORMATS)[number]

/** What compress's `texture_format` (a Mos extension) re-encodes textures to: texture_optimize's formats, and KTX2. */
export const COMPRESS_TEXTURE_FORMATS = ['webp', 'jpeg', 'png', 'ktx2'] as const
export type CompressTextureFormat = (typeof COMPRESS_TEXTURE_FORMATS)[number]

/** Standalone images accepted by the texture operations, by file extension. */
export const IMAGE_EXTENSIONS = ['png', 'jpg', 'jpeg', 'webp'] as const

/**
 * The upload extensions (lower case) each operation takes on a Mos server: the model formats, a zip of
 * one model with the files it references (docs/formats.md), and for the texture operations standalone
 * images. The contract lists the model formats only; the server reads its list off the engines' readers,
 * and a test holds the two equal. A client uses it to refuse a file it can judge itself before sending.
 */
export const UPLOAD_EXTENSIONS: Record<TaskType, readonly string[]> = (() => {
  const models = [...MODEL_FORMATS, 'zip']
  const withImages = [...models, ...IMAGE_EXTENSIONS]
  return {
    compress: models,
    convert: models,
    repair: models,
    diagnose: models,
    texture_optimize: withImages,
    texture_ktx2: withImages,
  }
})()

/**
 * A file name's extension as the server reads it to choose the format: lower case, after the last dot
 * of the name (a name without one has none: '').
 * @example uploadExtensionOf('models/Box.GLB') // 'glb'
 */
export function uploadExtensionOf(filename: string): string {
  const base = filename.replace(/^.*[\\/]/, '')
  return base.includes('.') ? base.slice(base.lastIndexOf('.') + 1).toLowerCase() : ''
}

export const MESHOPT_LEVELS = ['high', 'medium', 'low'] as const
export type MeshoptLevel = (typeof MESHOPT_LEVELS)[number]

/**
 * The glTF extension a meshopt result is declared with (a Mos extension field): `ext`,
 * EXT_meshopt_compression, which every meshopt reader knows; `khr`, KHR_meshopt_compression, whose
 * v1 vertex codec codes the same streams 2–14% smaller (fewer readers know it yet).
 */
export const MESHOPT_EXTENSIONS = ['ext', 'khr'] as const
export type MeshoptExtension = (typeof MESHOPT_EXTENSIONS)[number]

/** Operations each variant implements; the rest answer 501 there. */
export const IMPLEMENTED_TASK_TYPES: Record<Variant, readonly TaskType[]> = {
  A: TASK_TYPES,
  B: ['compress', 'convert', 'repair', 'texture_optimize'],
}

/** Path prefix of every endpoint. */
export const API_PREFIX = '/api/v1'

/** Header that carries the API key. */
export const API_KEY_HEADER = 'X-API-Key'
