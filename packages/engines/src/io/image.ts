/** Raster formats the texture operations read and write with sharp. */
export type ImageFormat = 'png' | 'jpeg' | 'webp'

/** The header of an image the texture operations can decode and re-encode. */
export interface RasterHeader {
  format: ImageFormat
  width: number
  height: number
}

/** True for the formats sharp decodes for us (png, jpeg, webp). */
export function isRasterFormat(format: string): format is ImageFormat {
  return format === 'png' || format === 'jpeg' || format === 'webp'
}

/** Standalone image uploads, by file extension, and the format each one holds. */
export const IMAGE_EXTENSION_FORMATS: Record<string, ImageFormat> = { png: 'png', jpg: 'jpeg', jpeg: 'jpeg', webp: 'webp' }

export const IMAGE_MIME_TYPES: Record<ImageFormat, string> = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' }

/** File extension written for each format. */
export const IMAGE_FILE_EXTENSIONS: Record<ImageFormat, string> = { png: 'png', jpeg: 'jpg', webp: 'webp' }

/** File extension for a texture's MIME type (image/webp → webp), or undefined for others. */
export function extensionForMimeType(mimeType: string): string | undefined {
  const format = (Object.keys(IMAGE_MIME_TYPES) as ImageFormat[]).find((f) => IMAGE_MIME_TYPES[f] === mimeType)
  if (format) return IMAGE_FILE_EXTENSIONS[format]
  return mimeType === 'image/ktx2' ? 'ktx2' : undefined
}

/** True when the upload's extension names a standalone image rather than a model. */
export function isImageExtension(extension: string): boolean {
  return Object.hasOwn(IMAGE_EXTENSION_FORMATS, extension.toLowerCase())
}
