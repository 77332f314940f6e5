import { errorMessage, ModelInputError } from '../errors.ts'
import { isRasterFormat, type RasterHeader } from '../io/image.ts'
import { readImageHeader } from '../io/image-header.ts'

/** Per-image limits of the texture operations. */
export interface TextureLimits {
  /** Largest encoded image accepted, in bytes (the licence tier's max_texture_size_mb); undefined = no limit. */
  maxTextureBytes?: number
  /** Largest image accepted, in pixels (width × height), checked on the header before decoding. */
  maxPixels?: number
}

export const TEXTURE_LIMITS_DEFAULTS = {
  // An 8K texture; decoding one costs 256 MB of RGBA, so a pool of a few threads stays in memory.
  maxPixels: 8192 * 8192,
} as const

/**
 * Checks one image against the limits before anything decodes it: its byte size, then the
 * dimensions its header declares (a 64-byte PNG may declare 100000 × 100000 pixels). Throws a
 * ModelInputError naming the image; returns the header when the format is one we can read.
 */
export function checkTextureLimits(bytes: Uint8Array, limits: TextureLimits, label: string): RasterHeader | undefined {
  const maxBytes = limits.maxTextureBytes
  if (maxBytes !== undefined && maxBytes >= 0 && bytes.byteLength > maxBytes) {
    throw new ModelInputError(
      `${label} is ${formatMb(bytes.byteLength)} MB, over the texture size limit of ${formatMb(maxBytes)} MB for the current license tier`,
    )
  }
  const header = readImageHeader(bytes)
  const maxPixels = limits.maxPixels ?? TEXTURE_LIMITS_DEFAULTS.maxPixels
  if (header && header.width * header.height > maxPixels) {
    throw new ModelInputError(
      `${label} declares ${header.width}×${header.height} pixels, over the limit of ${maxPixels} pixels (refused before decoding)`,
    )
  }
  if (header && (header.width === 0 || header.height === 0))
    throw new ModelInputError(`${label} declares an empty image (${header.width}×${header.height})`)
  // KTX2 and TGA headers are checked above but are not re-encoded by sharp.
  return header && isRasterFormat(header.format) ? { ...header, format: header.format } : undefined
}

/** sharp's own guard, for formats our header reader does not know: it refuses before decoding too. */
export function sharpInputOptions(limits: TextureLimits): { limitInputPixels: number; failOn: 'error' } {
  return { limitInputPixels: limits.maxPixels ?? TEXTURE_LIMITS_DEFAULTS.maxPixels, failOn: 'error' }
}

/**
 * Turns sharp's decoding errors into input errors with the image's name: anything sharp cannot
 * decode is the user's file, not an engine failure.
 */
export function imageDecodeError(error: unknown, label: string): ModelInputError {
  const message = errorMessage(error)
  if (/pixel limit/i.test(message)) return new ModelInputError(`${label} is larger than the pixel limit (refused before decoding)`)
  return new ModelInputError(`${label} could not be decoded: ${message}`)
}

function formatMb(bytes: number): string {
  // Three significant digits: a 1000-byte limit reads "0.000954", not "0".
  return String(Number((bytes / (1024 * 1024)).toPrecision(3)))
}
