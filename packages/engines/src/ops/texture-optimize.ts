import type { Document, Texture, Transform } from '@gltf-transform/core'
import { EXTTextureWebP } from '@gltf-transform/extensions'
import type sharpModule from 'sharp'
import { ModelInputError } from '../errors.ts'
import { extensionForMimeType, IMAGE_FILE_EXTENSIONS, IMAGE_MIME_TYPES, type ImageFormat } from '../io/image.ts'
import { smallerJpegCoding } from './jpeg-recode.ts'
import { mapLimited } from './map-limited.ts'
import { describeTexture } from './texture-roles.ts'
import { checkTextureLimits, imageDecodeError, type TextureLimits } from './texture-limits.ts'
import { type ImageSource, openImage, type ResizedPixels, resizedPixelsNote } from './resized-pixels.ts'
import { renameUri, type TextureReport } from './texture-report.ts'

/** sharp's module function, passed in by the caller (the worker), never imported here. */
export type SharpEncoder = typeof sharpModule

export interface TextureOptimizeOptions extends TextureLimits {
  encoder: SharpEncoder
  format: ImageFormat
  /** JPEG and WebP: quality 1–100. PNG: zlib compression level 1–9. Defaults per format. */
  quality?: number
  /**
   * Lossless normal maps stay lossless unless this is set: JPEG/WebP artefacts in a normal map show
   * as lighting noise. With format webp they become lossless WebP; with jpeg they stay (re-encoded)
   * PNG. Normal maps that are lossy already (JPEG) stay lossy, at high quality (see planEncoding).
   */
  lossyNormalMaps?: boolean
  /** Textures of one model encoded at once (see docs/textures.md on threads). */
  concurrency?: number
  /** compress's `texture_max_size` pixels, encoded instead of decoding the texture's lossy resized coding (resized-pixels.ts). */
  pixels?: ResizedPixels
}

export const TEXTURE_OPTIMIZE_DEFAULTS = {
  quality: { jpeg: 82, webp: 82, png: 6 } as Record<ImageFormat, number>,
  lossyNormalMaps: false,
  concurrency: 1,
}

/**
 * Re-encodes every texture of a model with sharp to JPEG, WebP or PNG. Textures are edited in
 * place, so every material slot keeps pointing at its texture, and a texture shared by several
 * materials is encoded once. Images sharp cannot read (KTX2) are left as they are and reported, and
 * a texture whose re-encoding is not smaller keeps its original bytes.
 *
 * ```ts
 * const report: TextureReport[] = []
 * await doc.transform(textureOptimize({ encoder: sharp, format: 'webp', quality: 82, report }))
 * ```
 */
export function textureOptimize(options: TextureOptimizeOptions & { report?: TextureReport[] }): Transform {
  const quality = resolveQuality(options)
  const concurrency = options.concurrency ?? TEXTURE_OPTIMIZE_DEFAULTS.concurrency
  return async function textureOptimizeTransform(doc: Document): Promise<void> {
    const textures = doc.getRoot().listTextures()
    const usedUris = new Set(textures.map((t) => t.getURI()).filter(Boolean))
    const reports = await mapLimited(textures, concurrency, (texture) => optimizeTexture(doc, texture, options, quality))
    for (const [i, report] of reports.entries()) {
      const texture = textures[i]!
      if (report.to !== report.from) {
        const uri = texture.getURI()
        if (uri) {
          usedUris.delete(uri)
          texture.setURI(renameUri(uri, extensionForMimeType(report.to)!, usedUris))
          usedUris.add(texture.getURI())
        }
      }
      options.report?.push(report)
    }
    syncWebpExtension(doc)
  }
}

async function optimizeTexture(doc: Document, texture: Texture, options: TextureOptimizeOptions, quality: number): Promise<TextureReport> {
  const { label, role, image, from, base } = describeTexture(doc, texture)
  if (!image) return { ...base, to: from, after: 0, skipped: 'no image data' }
  const header = checkTextureLimits(image, options, label)
  if (!header) return { ...base, to: from, after: image.byteLength, skipped: `${from || 'unknown format'} is not re-encoded` }

  // Resized pixels held (compress's texture_max_size) are encoded rather than their resize's lossy coding:
  // one generation of loss, and that coding is still what the result must be smaller than.
  const pixels = options.pixels?.get(texture)
  const source = pixels ?? image
  const plan = await planEncoding(options, quality, role.normalMap, header.format, image, source, label)
  const encoding = encodeImage(options.encoder, source, { ...plan, autoOrient: false, flatten: false }, options, label)
  // A re-encoding never grows a texture (docs/textures.md): when it would not be smaller than the
  // original's smallest lossless coding, the texture keeps its image and MIME type, and the report
  // says what the re-encoding would have cost. A JPEG kept is re-coded losslessly where that is
  // smaller: on this thread, while sharp re-encodes it on libuv's.
  const lossless = from === 'image/jpeg' ? smallerJpegCoding(image, { progressive: true }) : undefined
  const bytes = await encoding
  const notes = plan.note ? [plan.note] : []
  const kept = lossless?.bytes ?? image
  if (bytes.byteLength >= kept.byteLength) {
    notes.push(`original kept: ${describeFormat(plan)} would be ${bytes.byteLength} bytes, not smaller than its ${kept.byteLength}`)
    if (lossless) {
      texture.setImage(lossless.bytes)
      notes.push(losslessNote(image, lossless))
    }
    return { ...base, to: from, after: kept.byteLength, note: notes.join('; '), ...(lossless?.progressive ? { progressive: true } : {}) }
  }
  if (pixels) notes.push(resizedPixelsNote(from))
  texture.setImage(bytes).setMimeType(IMAGE_MIME_TYPES[plan.format])
  return { ...base, to: IMAGE_MIME_TYPES[plan.format], after: bytes.byteLength, ...(notes.length > 0 ? { note: notes.join('; ') } : {}) }
}

/** What a JPEG kept as it was became: the same coefficients, coded smaller. */
function losslessNote(image: Uint8Array, lossless: { bytes: Uint8Array; progressive: boolean }): string {
  const layout = lossless.progressive ? 'as a progressive JPEG' : 'with tables of its own'
  return `its JPEG coefficients re-coded losslessly ${layout}: ${image.byteLength} → ${lossless.bytes.byteLength} bytes, the same pixels`
}

/** The high quality a lossy normal map is re-encoded at when it stays lossy (JPEG or WebP). */
const LOSSY_NORMAL_MAP_QUALITY = 95

type EncodingPlan = Pick<EncodeSettings, 'format' | 'quality' | 'lossless'> & { note?: string }

/**
 * The encoding one texture gets. Normal maps stay lossless only when they were (a PNG or lossless
 * WebP normal map becomes PNG or lossless WebP): a JPEG normal map has its artefacts already, so
 * decoding it into a lossless file only multiplies its bytes (a 144 KB JPEG became a 502 KB PNG);
 * it becomes the requested lossy format at high quality instead, or stays JPEG when PNG was asked.
 * A texture with visible alpha asked to become JPEG stays PNG.
 */
async function planEncoding(
  options: TextureOptimizeOptions,
  quality: number,
  normalMap: boolean,
  source: ImageFormat,
  image: Uint8Array,
  pixels: ImageSource,
  label: string,
): Promise<EncodingPlan> {
  const asked = options.format
  if (normalMap && !options.lossyNormalMaps) {
    if (!isLossyImage(image, source)) {
      if (asked === 'png') return { format: 'png', quality, lossless: false }
      return asked === 'webp'
        ? { format: 'webp', quality, lossless: true, note: 'normal map kept lossless (lossless WebP)' }
        : { format: 'png', quality: TEXTURE_OPTIMIZE_DEFAULTS.quality.png, lossless: false, note: 'normal map kept lossless (PNG)' }
    }
    const format = asked === 'png' ? 'jpeg' : asked
    const note = `lossy normal map kept lossy (${format === 'jpeg' ? 'JPEG' : 'WebP'} at quality ${LOSSY_NORMAL_MAP_QUALITY})`
    return { format, quality: LOSSY_NORMAL_MAP_QUALITY, lossless: false, note }
  }
  if (asked === 'jpeg' && (await hasVisibleAlpha(options.encoder, pixels, options, label)))
    return { format: 'png', quality: TEXTURE_OPTIMIZE_DEFAULTS.quality.png, lossless: false, note: 'alpha channel kept (PNG)' } // JPEG has no alpha channel
  return { format: asked, quality, lossless: false }
}

function describeFormat(plan: EncodingPlan): string {
  if (plan.format === 'png') return 'PNG'
  return plan.lossless ? 'lossless WebP' : `${plan.format === 'jpeg' ? 'JPEG' : 'WebP'} at quality ${plan.quality}`
}

/**
 * Whether an image's encoding is lossy: JPEG always, PNG never, WebP when its image chunk is VP8
 * (lossy) rather than VP8L (lossless). Chunks are walked from the RIFF header (a VP8X file lists
 * ICCP, ANIM or ALPH chunks before the image's).
 */
function isLossyImage(bytes: Uint8Array, format: ImageFormat): boolean {
  if (format !== 'webp') return format === 'jpeg'
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  for (let offset = 12; offset + 8 <= bytes.byteLength; ) {
    const fourcc = String.fromCharCode(...bytes.subarray(offset, offset + 4))
    if (fourcc === 'VP8 ') return true
    if (fourcc === 'VP8L') return false
    const size = view.getUint32(offset + 4, true)
    offset += 8 + size + (size & 1)
  }
  return true
}

/**
 * The quality for the target format, checked: the routes validate it (4.7), but a bad value here
 * would otherwise surface as sharp's error about the image.
 */
function resolveQuality(options: TextureOptimizeOptions): number {
  if (!(options.format in IMAGE_MIME_TYPES))
    throw new ModelInputError(`texture format must be jpeg, webp or png, not ${String(options.format)}`)
  const quality = options.quality ?? TEXTURE_OPTIMIZE_DEFAULTS.quality[options.format]
  const max = options.format === 'png' ? 9 : 100
  if (!Number.isInteger(quality) || quality < 1 || quality > max)
    throw new ModelInputError(`${options.format} quality must be an integer from 1 to ${max}, not ${quality}`)
  return quality
}

export interface EncodeSettings {
  format: ImageFormat
  quality: number
  lossless: boolean
  /** Standalone images honour their EXIF orientation; textures never do (GPUs ignore EXIF). */
  autoOrient: boolean
  /** JPEG output of an image with alpha: composite on white rather than let the encoder drop it to black. */
  flatten: boolean
  /** Resized to exactly these dimensions first (Lanczos, sharp's default), for compress's texture_max_size. */
  resize?: { width: number; height: number }
}

/** Encodes one image with sharp as `settings` say; an image sharp cannot decode is the input's error, named by `label`. */
export async function encodeImage(
  encoder: SharpEncoder,
  bytes: ImageSource,
  settings: EncodeSettings,
  limits: TextureLimits,
  label: string,
): Promise<Uint8Array> {
  try {
    let pipeline = openImage(encoder, bytes, limits)
    if (settings.autoOrient) pipeline = pipeline.autoOrient()
    if (settings.flatten) pipeline = pipeline.flatten({ background: '#ffffff' })
    if (settings.resize) pipeline = pipeline.resize({ ...settings.resize, fit: 'fill' })
    switch (settings.format) {
      case 'jpeg':
        pipeline = pipeline.jpeg({ quality: settings.quality, mozjpeg: true })
        break
      case 'webp':
        pipeline = settings.lossless
          ? pipeline.webp({ lossless: true, effort: 4 })
          : pipeline.webp({ quality: settings.quality, effort: 4 })
        break
      case 'png':
        pipeline = pipeline.png({ compressionLevel: settings.quality, adaptiveFiltering: true })
        break
    }
    return new Uint8Array(await pipeline.toBuffer())
  } catch (error) {
    throw imageDecodeError(error, label)
  }
}

async function hasVisibleAlpha(encoder: SharpEncoder, bytes: ImageSource, limits: TextureLimits, label: string): Promise<boolean> {
  try {
    const image = openImage(encoder, bytes, limits)
    if (!(await image.metadata()).hasAlpha) return false
    return !(await image.stats()).isOpaque
  } catch (error) {
    throw imageDecodeError(error, label)
  }
}

/** EXT_texture_webp is required while any texture is WebP, and removed once none is. */
export function syncWebpExtension(doc: Document): void {
  const webp = doc
    .getRoot()
    .listTextures()
    .some((t) => t.getMimeType() === 'image/webp')
  const existing = doc
    .getRoot()
    .listExtensionsUsed()
    .find((e) => e.extensionName === EXTTextureWebP.EXTENSION_NAME)
  if (webp) doc.createExtension(EXTTextureWebP).setRequired(true)
  else existing?.dispose()
}

export interface StandaloneImageResult {
  bytes: Uint8Array
  extension: string
  details: Record<string, unknown>
}

/**
 * Re-encodes a standalone PNG, JPEG or WebP image to the target format. JPEG output of an image
 * with alpha is composited on white; EXIF orientation is applied, since the output carries no EXIF.
 */
export async function optimizeImage(bytes: Uint8Array, options: TextureOptimizeOptions): Promise<StandaloneImageResult> {
  const quality = resolveQuality(options)
  const header = checkTextureLimits(bytes, options, 'image')
  const settings = { format: options.format, quality, lossless: false, autoOrient: true, flatten: options.format === 'jpeg' }
  const encoding = encodeImage(options.encoder, bytes, settings, options, 'image')
  // A JPEG asked as JPEG: its own coefficients coded smaller win over a re-encoding that is not smaller
  // (the same pixels; its EXIF, orientation included, stays with them). Coded here while sharp re-encodes.
  const lossless = options.format === 'jpeg' && header?.format === 'jpeg' ? smallerJpegCoding(bytes, { progressive: true }) : undefined
  const encoded = await encoding
  const output = lossless && lossless.bytes.byteLength <= encoded.byteLength ? lossless.bytes : encoded
  const recoded =
    lossless && output === lossless.bytes
      ? { note: losslessNote(bytes, lossless), ...(lossless.progressive ? { progressive: true } : {}) }
      : {}
  return {
    bytes: output,
    extension: IMAGE_FILE_EXTENSIONS[options.format],
    details: {
      width: header?.width,
      height: header?.height,
      textures: [
        {
          name: 'image',
          from: header ? IMAGE_MIME_TYPES[header.format] : '',
          to: IMAGE_MIME_TYPES[options.format],
          before: bytes.byteLength,
          after: output.byteLength,
          ...recoded,
        },
      ],
    },
  }
}
