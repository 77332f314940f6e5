import type { Document, Texture, Transform } from '@gltf-transform/core'
import type { ImageFormat } from '../io/image.ts'
import { mapLimited } from './map-limited.ts'
import { checkTextureLimits, type TextureLimits } from './texture-limits.ts'
import { encodeImage, type SharpEncoder } from './texture-optimize.ts'
import type { TextureReport } from './texture-report.ts'
import { describeTexture } from './texture-roles.ts'

export interface TextureResizeOptions extends TextureLimits {
  encoder: SharpEncoder
  /** Longest side in pixels; a texture with a longer side is scaled down, keeping its aspect ratio. */
  maxSize: number
  /** Each side rounded down to a power of two as well (WebGL 1 repeat and mipmaps), never up. */
  powerOfTwo?: boolean
  /** Textures of one model encoded at once. */
  concurrency?: number
  /** Filled with one entry per texture resized or left unreadable. */
  report?: TextureReport[]
}

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
 * Textures sharp cannot read (KTX2) are left as they are and reported.
 *
 * ```ts
 * await doc.transform(textureResize({ encoder: sharp, maxSize: 1024, powerOfTwo: true }))
 * ```
 */
export function textureResize(options: TextureResizeOptions): Transform {
  return async function textureResizeTransform(doc: Document): Promise<void> {
    const textures = doc.getRoot().listTextures()
    const reports = await mapLimited(textures, options.concurrency ?? 1, (texture) => resizeTexture(doc, texture, options))
    for (const report of reports) if (report) options.report?.push(report)
  }
}

async function resizeTexture(doc: Document, texture: Texture, options: TextureResizeOptions): Promise<TextureReport | undefined> {
  const { label, role, image, from, base } = describeTexture(doc, texture)
  if (!image) return undefined
  const header = checkTextureLimits(image, options, label)
  if (!header) return { ...base, to: from, after: image.byteLength, skipped: `${from || 'unknown format'} is not resized` }
  const [width, height] = resizedDimensions(header.width, header.height, options.maxSize, options.powerOfTwo)
  if (width === header.width && height === header.height) return undefined
  const format = header.format
  // A normal map in WebP may be lossless on purpose (texture_optimize keeps them so): stay lossless.
  const lossless = format === 'webp' && role.normalMap
  const settings = { format, quality: RESIZE_QUALITY[format], lossless, autoOrient: false, flatten: false, resize: { width, height } }
  const bytes = await encodeImage(options.encoder, image, settings, options, label)
  texture.setImage(bytes)
  return { ...base, to: from, after: bytes.byteLength, resizedFrom: [header.width, header.height], size: [width, height] }
}
