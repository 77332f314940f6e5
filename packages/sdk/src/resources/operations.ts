import type {
  CompressOptions,
  ConvertOptions,
  Engine,
  SubmitResponse,
  TextureKtx2Options,
  TextureOptimizeOptions,
} from '../contract/index.ts'
import type { RequestOptions, Transport } from '../request.ts'
import { toFormData, type UploadParams, type UploadResolver } from '../upload.ts'

/** POST /compress (4.3). Only `engine` is required; the server fills the defaults. */
export type CompressParams<U> = UploadParams<U> & { engine: Engine } & Partial<Omit<CompressOptions, 'engine'>>
/** POST /convert (4.4). A `gltf` target comes back as a .zip bundle. */
export type ConvertParams<U> = UploadParams<U> & ConvertOptions
/** POST /repair (4.5). */
export type RepairParams<U> = UploadParams<U>
/** POST /diagnose (4.6; variant A — B answers 501). */
export type DiagnoseParams<U> = UploadParams<U>
/** POST /textures/optimize (4.7). */
export type OptimizeTexturesParams<U> = UploadParams<U> & Pick<TextureOptimizeOptions, 'format'> & Partial<Pick<TextureOptimizeOptions, 'quality'>>
/** POST /textures/ktx2 (4.8; variant A — B answers 501). */
export type EncodeKtx2Params<U> = UploadParams<U> & Partial<TextureKtx2Options>

/** The six submit calls; each answers at once with a pending task. */
export interface OperationsResource<U> {
  /** Submits a compress task (Draco or meshopt). */
  compress(params: CompressParams<U>, options?: RequestOptions): Promise<SubmitResponse>
  /** Submits a format conversion. */
  convert(params: ConvertParams<U>, options?: RequestOptions): Promise<SubmitResponse>
  /** Submits a repair (empty nodes, normals, duplicate vertices, degenerate faces). */
  repair(params: RepairParams<U>, options?: RequestOptions): Promise<SubmitResponse>
  /** Submits a diagnosis; the completed record carries `result`. */
  diagnose(params: DiagnoseParams<U>, options?: RequestOptions): Promise<SubmitResponse>
  /** Submits a texture re-encode (jpeg, webp, png), of a model's textures or a standalone image. */
  optimizeTextures(params: OptimizeTexturesParams<U>, options?: RequestOptions): Promise<SubmitResponse>
  /** Submits a KTX2 (Basis Universal) encode: ETC1S by default, UASTC with `uastc: true`. */
  encodeKtx2(params: EncodeKtx2Params<U>, options?: RequestOptions): Promise<SubmitResponse>
}

/** Creates the submit calls on a transport; `resolveUpload` turns the `file` param into a File. */
export function createOperations<U>(transport: Transport, resolveUpload: UploadResolver<U>): OperationsResource<U> {
  async function submit(path: string, params: UploadParams<U>, options: RequestOptions | undefined): Promise<SubmitResponse> {
    const { file, filename, ...fields } = params
    const form = toFormData('file', [await resolveUpload(file, filename)], fields)
    return (await transport.request({ method: 'POST', path, body: form, responseType: 'json' }, options)) as SubmitResponse
  }
  return {
    compress: (params, options) => submit('/compress', params, options),
    convert: (params, options) => submit('/convert', params, options),
    repair: (params, options) => submit('/repair', params, options),
    diagnose: (params, options) => submit('/diagnose', params, options),
    optimizeTextures: (params, options) => submit('/textures/optimize', params, options),
    encodeKtx2: (params, options) => submit('/textures/ktx2', params, options),
  }
}
