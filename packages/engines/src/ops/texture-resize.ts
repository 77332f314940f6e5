import type { Document, Texture, Transform } from '@gltf-transform/core'
import type { ImageFormat } from '../io/image.ts'
import { readImageHeader } from '../io/image-header.ts'
import { mapLimited } from './map-limited.ts'
import { checkTextureLimits, imageDecodeError, type TextureLimits } from './texture-limits.ts'
import { encodeImage, type SharpEncoder } from './texture-optimize.ts'
import { openImage, type RawPixels, type ResizedPixels } from './resized-pixels.ts'
import { leftAsItWasNote, type TextureReport } from './texture-report.ts'
import { describeTexture } from './texture-roles.ts'

export interface TextureResizeOptions extends TextureLimits {
  encoder: SharpEncoder
  /** Longest side in pixels; a texture with a longer side is scaled down, keeping its aspect ratio. */
  maxSize: number
  /** Each side rounded down to a power of two as well (WebGL 1 repeat and mipmaps), never up. */
  powerOfTwo?: boolean
  /** Textures of one model encoded at once. */
  concurrency?: number
  /** Filled with one entry per texture resized, or over the size asked for and left as it was. */
  report?: TextureReport[]
  /** Filled with a note naming each texture that needed resizing and was left as it was, and why. */
  notes?: string[]
  /**
   * Given where a re-encoding follows (compress's `texture_format`): filled with the resized pixels of
   * each texture the resize encoded lossily, for that re-encoding to encode once. The textures get the
   * same bytes either way.
   */
  pixels?: ResizedPixels
  /** The most bytes of `pixels` held at once (HELD_PIXELS_MAX_BYTES when not given; tests give less). */
  heldPixelsMaxBytes?: number
}

/**
 * At most this many bytes of resized pixels are held at once for `texture_format` (one 8192² RGBA
 * image, the decoders' pixel bound): they stay in memory from the resize to the re-encoding, all of a
 * model's textures together, outside the engine thread's heap limit. Past it, a texture's re-encoding
 * reads the resize's quality-90 coding (two generations of loss, as before the pixels were held), and
 * the notes say so.
 */
export const HELD_PIXELS_MAX_BYTES = 256 * 1024 * 1024

/**
 * Re-encoding quality of a resized texture, in its own format: high, since the texture is already
 * lossy where it was JPEG or WebP, and resizing should not add a second visible generation of loss.
 */
const RESIZE_QUALITY: Record<ImageFormat, number> = { jpeg: 90, webp: 90, png: 6 }

/** The dimensions a `width`×`height` texture is written at (unchanged when it already fits). */
export function resizedDimensions(width: number, height: number, maxSize: number, powerOfTwo = false): [number, number] {
  const scale = Math.min(1, maxSize / Math.max(width, height))
  const fit = (side: number) => Math.max(1, Math.round(side * scale))
  const floorPow2 = (side: number) => 2 ** Math.floor(Math.log2(side))
  return powerOfTwo ? [floorPow2(fit(width)), floorPow2(fit(height))] : [fit(width), fit(height)]
}

/**
 * Scales down every texture over `maxSize` (and, with `powerOfTwo`, every texture whose sides are
 * not powers of two) with sharp, re-encoded in its own format, before the geometry is encoded.
 * Textures that need it but sharp cannot read (KTX2) are left as they are, reported and named in the notes.
 *
 * ```ts
 * await doc.transform(textureResize({ encoder: sharp, maxSize: 1024, powerOfTwo: true }))
 * ```
 */
export function textureResize(options: TextureResizeOptions): Transform {
  return async function textureResizeTransform(doc: Document): Promise<void> {
    const textures = doc.getRoot().listTextures()
    const held = { bytes: 0 }
    const reports = await mapLimited(textures, options.concurrency ?? 1, (texture) => resizeTexture(doc, texture, options, held))
    for (const report of reports) {
      if (!report) continue
      options.report?.push(report)
      if (report.skipped) options.notes?.push(leftAsItWasNote(report.name, report.skipped))
    }
  }
}

async function resizeTexture(
  doc: Document,
  texture: Texture,
  options: TextureResizeOptions,
  held: { bytes: number },
): Promise<TextureReport | undefined> {
  const { label, role, image, from, base } = describeTexture(doc, texture)
  if (!image) return { ...base, to: from, after: 0, skipped: 'no image data to resize' }
  const header = checkTextureLimits(image, options, label)
  if (!header) {
    // Not decodable here; its header may still say it fits, and then nothing was asked of it.
    const size = readImageHeader(image, from)
    if (size && sameSize(size, resizedDimensions(size.width, size.height, options.maxSize, options.powerOfTwo))) return undefined
    const why = size
      ? `${size.format.toUpperCase()} is not resized (sharp cannot decode it), so its ${size.width}×${size.height} is kept`
      : `${from || 'an unknown format'} is not resized (sharp cannot decode it)`
    return { ...base, to: from, after: image.byteLength, skipped: why }
  }
  const [width, height] = resizedDimensions(header.width, header.height, options.maxSize, options.powerOfTwo)
  if (sameSize(header, [width, height])) return undefined
  const format = header.format
  // A normal map in WebP may be lossless on purpose (texture_optimize keeps them so): stay lossless.
  const lossless = format === 'webp' && role.normalMap
  const settings = { format, quality: RESIZE_QUALITY[format], lossless, autoOrient: false, flatten: false, resize: { width, height } }
  // The pixels are decoded and resized a second time, beside the encoding (sharp runs both on libuv's
  // threads), so the texture's bytes are exactly those written without a re-encoding to follow.
  const keepPixels =
    options.pixels && (format === 'jpeg' || (format === 'webp' && !lossless)) && holdPixels(held, width * height, label, options)
  const [bytes, pixels] = await Promise.all([
    encodeImage(options.encoder, image, settings, options, label),
    keepPixels ? resizedPixels(options.encoder, image, [width, height], options, label) : undefined,
  ])
  texture.setImage(bytes)
  if (pixels) options.pixels?.set(texture, pixels)
  return { ...base, to: from, after: bytes.byteLength, resizedFrom: [header.width, header.height], size: [width, height] }
}

/**
 * Reserves the bytes of `pixels` resized pixels (4 a pixel, the most sharp's raw output holds) within
 * the held bytes' bound (HELD_PIXELS_MAX_BYTES); false, with a note naming the texture, where they would pass it.
 */
function holdPixels(held: { bytes: number }, pixels: number, label: string, options: TextureResizeOptions): boolean {
  const bytes = pixels * 4
  const most = options.heldPixelsMaxBytes ?? HELD_PIXELS_MAX_BYTES
  if (held.bytes + bytes > most) {
    options.notes?.push(
      `${label}: re-encoded from the resize's quality-90 coding, not from its resized pixels (this model's resized textures pass the ${most / 2 ** 20} MiB of pixels Mos holds at once)`,
    )
    return false
  }
  held.bytes += bytes
  return true
}

/** The image's pixels at `width`×`height`, resized as encodeImage resizes them. */
async function resizedPixels(
  encoder: SharpEncoder,
  image: Uint8Array,
  [width, height]: [number, number],
  limits: TextureLimits,
  label: string,
): Promise<RawPixels> {
  try {
    const pipeline = openImage(encoder, image, limits).resize({ width, height, fit: 'fill' })
    const { data, info } = await pipeline.raw({ depth: 'uchar' }).toBuffer({ resolveWithObject: true })
    return { data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), width, height, channels: info.channels }
  } catch (error) {
    throw imageDecodeError(error, label)
  }
}

function sameSize(header: { width: number; height: number }, [width, height]: [number, number]): boolean {
  return header.width === width && header.height === height
}
