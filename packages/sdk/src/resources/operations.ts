import { OPERATION_ENDPOINTS, type OperationRequestFields, type SubmitResponse } from '../contract/index.ts'
import type { RequestOptions, Transport } from '../request.ts'
import { toFormData, type UploadParams, type UploadResolver } from '../upload.ts'

type Endpoint = (typeof OPERATION_ENDPOINTS)[number]

/** Fields every submit takes beside its own (Mos extensions, docs/api.md). */
export interface SubmitExtensionFields {
  /** Mos extension: an http(s) URL the service POSTs the task record to, signed, when the task ends (webhooks). */
  callback_url?: string
}

/** The params of a submit call: the upload, the endpoint's fields (`OperationRequestFields`) and the webhook's URL. */
export type OperationParams<T extends Endpoint['type'], U> = UploadParams<U> & OperationRequestFields[T] & SubmitExtensionFields

/** POST /compress (4.3). Only `engine` is required; the server fills the defaults. */
export type CompressParams<U> = OperationParams<'compress', U>
/** POST /convert (4.4). A `gltf` target comes back as a .zip bundle. */
export type ConvertParams<U> = OperationParams<'convert', U>
/** POST /repair (4.5). */
export type RepairParams<U> = OperationParams<'repair', U>
/** POST /diagnose (4.6; variant A — B answers 501). */
export type DiagnoseParams<U> = OperationParams<'diagnose', U>
/** POST /textures/optimize (4.7). */
export type OptimizeTexturesParams<U> = OperationParams<'texture_optimize', U>
/** POST /textures/ktx2 (4.8; variant A — B answers 501). */
export type EncodeKtx2Params<U> = OperationParams<'texture_ktx2', U>

/**
 * The submit calls, one per endpoint of the contract's table (`OPERATION_ENDPOINTS`): `compress`,
 * `convert`, `repair`, `diagnose`, `optimizeTextures`, `encodeKtx2`. Each answers at once with a
 * pending task.
 */
export type OperationsResource<U> = {
  [E in Endpoint as E['method']]: (params: OperationParams<E['type'], U>, options?: RequestOptions) => Promise<SubmitResponse>
}

/** Creates the submit calls on a transport; `resolveUpload` turns the `file` param into a File. */
export function createOperations<U>(transport: Transport, resolveUpload: UploadResolver<U>): OperationsResource<U> {
  async function submit(path: string, params: UploadParams<U>, options: RequestOptions | undefined): Promise<SubmitResponse> {
    const { file, filename, ...fields } = params
    const form = toFormData('file', [await resolveUpload(file, filename)], fields)
    return (await transport.request({ method: 'POST', path, body: form, responseType: 'json' }, options)) as SubmitResponse
  }
  const calls = OPERATION_ENDPOINTS.map((endpoint) => [
    endpoint.method,
    (params: UploadParams<U>, options?: RequestOptions) => submit(endpoint.path, params, options),
  ])
  // One call per entry of the table, under its method name: the mapped type says the same.
  return Object.fromEntries(calls) as OperationsResource<U>
}
