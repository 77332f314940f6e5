import { InvalidUploadError } from './errors.ts'

/**
 * What an upload may be made of, on every runtime: bytes (Buffer is a Uint8Array), a Blob or File,
 * or a web ReadableStream. Paths and Node streams are added by `@mos/sdk/node`.
 */
export type Uploadable = Blob | Uint8Array | ArrayBuffer | ReadableStream<Uint8Array>

/** The file part of a submit call. The server picks the format from the name's extension. */
export interface UploadParams<U = Uploadable> {
  file: U
  /** File name sent with the upload. Required unless `file` is a File (or a path, on Node). */
  filename?: string
}

/** Turns an upload into a named Blob (File); custom runtimes plug in more input kinds. */
export type UploadResolver<U> = (input: U, filename: string | undefined) => Promise<File>

/**
 * Makes a File from any portable upload, keeping the file name. A stream is read into memory first:
 * a multipart body has to be replayable for a retry after 429, and browsers cannot stream request
 * bodies over HTTP/1.1. On Node, `fileFromPath` from `@mos/sdk/node` gives a disk-backed File instead.
 * Throws `InvalidUploadError` (nothing sent) without a file name or for an input it cannot upload.
 * @example const file = await toFile(bytes, 'model.glb')
 */
export async function toFile(input: Uploadable, filename?: string): Promise<File> {
  const name = filename ?? (typeof File !== 'undefined' && input instanceof File ? input.name : undefined)
  if (!name)
    throw new InvalidUploadError('[mos] upload needs a file name (pass `filename`): the server reads the format from its extension')
  if (input instanceof Blob) return input instanceof File && input.name === name ? input : new File([input], name, { type: input.type })
  if (input instanceof Uint8Array || input instanceof ArrayBuffer) return new File([input as BlobPart], name)
  if (input instanceof ReadableStream) return new File([await new Response(input).blob()], name)
  throw new InvalidUploadError(
    `[mos] cannot upload a ${describe(input)}: pass bytes, a Blob/File or a ReadableStream (paths and Node streams via @mos/sdk/node)`,
  )
}

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (typeof value !== 'object') return typeof value
  return (value as object).constructor?.name ?? 'object'
}

/** Builds the multipart body of a submit call: the file part plus the defined fields as text. */
export function toFormData(filePart: string, files: File[], fields: Record<string, unknown>): FormData {
  const form = new FormData()
  for (const file of files) form.append(filePart, file, file.name)
  for (const [name, value] of Object.entries(fields)) {
    if (value !== undefined && value !== null) form.append(name, String(value))
  }
  return form
}
