import type { Document, Texture } from '@gltf-transform/core'
import { pngChunkTypes, readImageHeader } from '../io/image-header.ts'
import { encodeSmallestPng } from '../io/png-smallest.ts'
import type { RgbaImage } from '../io/tga.ts'
import { mapLimited } from './map-limited.ts'
import { sharpInputOptions, TEXTURE_LIMITS_DEFAULTS, type TextureLimits } from './texture-limits.ts'
import type { SharpEncoder } from './texture-optimize.ts'
import type { TextureReport } from './texture-report.ts'
import { describeTexture } from './texture-roles.ts'

/**
 * The largest PNG re-packed: 16 megapixels (a 4096² texture) decode to 64 MB of RGBA, and each
 * candidate layout holds a copy of about that size while it is deflated.
 */
export const REPACK_MAX_PIXELS = 4096 * 4096

/**
 * PNGs re-packed at once even where the caller has one image thread: their decoding and deflating
 * run on libuv's threads, so one task on an idle machine then uses both cores (ClearCoatTest on the
 * real service, two engine threads: 149–242 ms of processing against 181–276), and with every
 * engine thread busy the same deflates run either way.
 */
export const MIN_AT_ONCE = 2

export interface PngRepackOptions extends TextureLimits {
  sharp: SharpEncoder
  /** The image threads the caller has; PNGs are re-packed this many at once, but at least MIN_AT_ONCE. */
  concurrency: number
  /**
   * PNGs carrying any of these chunk types are left as they are (the re-pack writes none of them):
   * for readers that may honour what glTF's ignore (MEANINGFUL_PNG_CHUNKS).
   */
  keepWith?: ReadonlySet<string>
  /** Only these textures (those the target writes); every one when not given. */
  only?: ReadonlySet<Texture>
}

/**
 * What a re-pack would drop that a reader other than glTF's may act on: colour-space chunks (gamma,
 * chromaticities, sRGB intent, ICC profile, coding-independent code points, mastering display and
 * light levels), EXIF (orientation) and text (a copyright or licence line, say). Not pHYs (pixel
 * density), tIME, bKGD and the like, which no texture reader acts on.
 */
export const MEANINGFUL_PNG_CHUNKS: ReadonlySet<string> = new Set([
  'gAMA',
  'cHRM',
  'sRGB',
  'iCCP',
  'cICP',
  'mDCv',
  'cLLi',
  'eXIf',
  'tEXt',
  'zTXt',
  'iTXt',
])

/**
 * Re-packs every PNG texture as the smallest PNG of exactly its pixels (`encodeSmallestPng`), where
 * that is smaller than it: lossless, so compress does it on every run, where gltfpack copies
 * images as they are (ClearCoatTest's five PNGs: 27.1 → 11.7 KB). Answers a report per texture
 * re-packed. A PNG is left as it is where its pixels could read differently once re-packed or its
 * decoding costs too much:
 * - more than 8 bits a sample (sharp's RGBA is 8-bit) or an ICC profile (sharp would convert the
 *   pixels to sRGB, where glTF's loaders ignore the profile and read them as stored);
 * - more pixels than REPACK_MAX_PIXELS or the limits allow;
 * - bytes sharp cannot decode: compress does not fail on an image it only carries, as before.
 *
 * ```ts
 * const repacked = await repackPngTextures(doc, { sharp, concurrency: 2 })
 * ```
 */
export async function repackPngTextures(doc: Document, options: PngRepackOptions): Promise<TextureReport[]> {
  const pngs = doc
    .getRoot()
    .listTextures()
    .filter((texture) => texture.getMimeType() === 'image/png' && (options.only?.has(texture) ?? true))
  const atOnce = Math.max(MIN_AT_ONCE, options.concurrency)
  const reports = await mapLimited(pngs, atOnce, (texture) => repackTexture(doc, texture, options))
  return reports.filter((report) => report !== undefined)
}

async function repackTexture(doc: Document, texture: Texture, options: PngRepackOptions): Promise<TextureReport | undefined> {
  const { image, base } = describeTexture(doc, texture)
  const bytes = image && (await smallerPng(image, options))
  if (!bytes) return undefined
  texture.setImage(bytes)
  return { ...base, to: 'image/png', after: bytes.byteLength }
}

/**
 * A PNG's smallest re-pack (`encodeSmallestPng`), or undefined where it is not smaller or the PNG
 * stays as it is (see repackPngTextures): a function of the bytes alone, so it may be worked out
 * before the texture's fate is known (lossless-textures.ts).
 *
 * ```ts
 * const smaller = (await smallerPng(png, { sharp, concurrency: 1 })) ?? png
 * ```
 */
export async function smallerPng(image: Uint8Array, options: PngRepackOptions): Promise<Uint8Array | undefined> {
  const pixels = await repackablePixels(image, options)
  return pixels && smallerFromPixels(image, pixels)
}

/**
 * A PNG's pixels as 8-bit RGBA, decoded as the re-pack decodes them; undefined for a PNG that stays
 * as it is (see repackPngTextures).
 *
 * ```ts
 * const pixels = await repackablePixels(png, { sharp, concurrency: 1 })
 * ```
 */
export async function repackablePixels(image: Uint8Array, options: PngRepackOptions): Promise<RgbaImage | undefined> {
  const header = readImageHeader(image)
  if (header?.format !== 'png') return undefined
  const keepWith = options.keepWith
  if (keepWith && [...pngChunkTypes(image)].some((type) => keepWith.has(type))) return undefined
  const pixels = header.width * header.height
  if (pixels > Math.min(REPACK_MAX_PIXELS, options.maxPixels ?? TEXTURE_LIMITS_DEFAULTS.maxPixels)) return undefined
  return decodeRgba(options.sharp, image, options)
}

/**
 * The smallest PNG of a PNG's decoded pixels, where smaller than it.
 *
 * ```ts
 * const smaller = await smallerFromPixels(png, await repackablePixels(png, options))
 * ```
 */
export async function smallerFromPixels(image: Uint8Array, pixels: RgbaImage): Promise<Uint8Array | undefined> {
  const bytes = await encodeSmallestPng(pixels)
  return bytes.byteLength < image.byteLength ? bytes : undefined
}

/** The image's pixels as 8-bit RGBA, or undefined where re-packing could change what they read as (see above). */
async function decodeRgba(sharp: SharpEncoder, image: Uint8Array, limits: TextureLimits): Promise<RgbaImage | undefined> {
  try {
    const pipeline = sharp(image, sharpInputOptions(limits))
    const meta = await pipeline.metadata()
    if (meta.depth !== 'uchar' || meta.hasProfile) return undefined
    // Grey images too as four channels: their grey is copied to red, green and blue, as loaders do.
    const { data, info } = await pipeline.toColourspace('srgb').ensureAlpha().raw().toBuffer({ resolveWithObject: true })
    return info.channels === 4 ? { width: info.width, height: info.height, data } : undefined
  } catch {
    return undefined
  }
}
