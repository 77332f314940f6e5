import type { Document, Texture, Transform } from '@gltf-transform/core'
import { KHRTextureBasisu } from '@gltf-transform/extensions'
import { assignDefaults } from '@gltf-transform/functions'
import { ModelInputError } from '../errors.ts'
import { encodeBasisKtx2, type BasisModule } from '../basis-encoder.ts'
import { IMAGE_MIME_TYPES } from '../io/image.ts'
import { ktx2ResizeNote, ktx2Size } from './ktx2-size.ts'
import { describeTexture } from './texture-roles.ts'
import { checkTextureLimits, imageDecodeError, type TextureLimits } from './texture-limits.ts'
import { type ImageSource, openImage, type ResizedPixels, resizedPixelsNote } from './resized-pixels.ts'
import { syncWebpExtension, type SharpEncoder } from './texture-optimize.ts'
import { renameUri, type TextureReport } from './texture-report.ts'

export interface TextureKtx2Options extends TextureLimits {
  /** sharp, to decode the source images; passed in by the caller. */
  encoder: SharpEncoder
  /** The Basis Universal WASM module (see loadBasisEncoder), loaded once per thread by the caller. */
  basis: BasisModule
  /** UASTC (near-original quality, about a quarter of RGBA) instead of ETC1S (about a tenth, softer). */
  uastc?: boolean
  /** ETC1S: quality level 1–255 (default 128). UASTC: level 0–4 (default 2). */
  quality?: number
  /**
   * Normal maps are encoded UASTC even in ETC1S mode (as gltfpack and toktx users do): ETC1S's
   * shared endpoints turn a normal map's fine gradients into blocky lighting.
   */
  normalMapsUastc?: boolean
  /** Called after each texture with the fraction done. */
  onProgress?: (fraction: number) => void
  report?: TextureReport[]
  /** Filled with a note for each texture encoded at another size than its own, naming both sizes. */
  notes?: string[]
  /** compress's `texture_max_size` pixels, encoded instead of decoding the texture's lossy resized coding. */
  pixels?: ResizedPixels
}

export const TEXTURE_KTX2_DEFAULTS = {
  uastc: false,
  etc1sQuality: 128,
  uastcQuality: 2,
  normalMapsUastc: true,
}

/**
 * Encodes every texture of a model to KTX2 (Basis Universal) with mipmaps, as `image/ktx2` under a
 * required KHR_texture_basisu. Colour textures (base colour, emissive) are sRGB, every other slot
 * linear, in both the encoder's metrics and the KTX2 transfer function. Textures are edited in place,
 * so material slots keep their textures and a shared texture is encoded once.
 *
 * ```ts
 * await doc.transform(textureKtx2({ encoder: sharp, basis: await loadBasisEncoder(), uastc: false, quality: 128 }))
 * ```
 */
export function textureKtx2(options: TextureKtx2Options): Transform {
  checkKtx2Options(options)
  return async function textureKtx2Transform(doc: Document): Promise<void> {
    const textures = doc.getRoot().listTextures()
    const usedUris = new Set(textures.map((t) => t.getURI()).filter(Boolean))
    let encoded = 0
    // One at a time: the WASM encoder is single-threaded and synchronous (see docs/textures.md).
    for (const [i, texture] of textures.entries()) {
      const report = await encodeTexture(doc, texture, options)
      if (!report.skipped) {
        encoded++
        const uri = texture.getURI()
        if (uri) {
          usedUris.delete(uri)
          texture.setURI(renameUri(uri, 'ktx2', usedUris))
          usedUris.add(texture.getURI())
        }
      }
      options.report?.push(report)
      options.onProgress?.((i + 1) / textures.length)
    }
    if (encoded > 0 || textures.some((t) => t.getMimeType() === 'image/ktx2')) doc.createExtension(KHRTextureBasisu).setRequired(true)
    syncWebpExtension(doc)
  }
}

async function encodeTexture(doc: Document, texture: Texture, options: TextureKtx2Options): Promise<TextureReport> {
  const { label, role, image, from, base } = describeTexture(doc, texture)
  if (!image) return { ...base, to: from, after: 0, skipped: 'no image data' }
  if (from === 'image/ktx2') return { ...base, to: from, after: image.byteLength, skipped: 'already KTX2' }
  const header = checkTextureLimits(image, options, label)
  if (!header) return { ...base, to: from, after: image.byteLength, skipped: `${from || 'unknown format'} cannot be decoded` }
  // Pixels compress's texture_max_size held are encoded rather than their resize's lossy coding (resized-pixels.ts).
  const pixels = options.pixels?.get(texture)
  const encoded = await encodeKtx2(pixels ?? image, options, { srgb: role.srgb, normalMap: role.normalMap }, label)
  texture.setImage(encoded.bytes).setMimeType('image/ktx2')
  if (encoded.note) options.notes?.push(encoded.note)
  const once = pixels ? { note: resizedPixelsNote(from) } : {}
  return { ...base, ...ktx2Report(encoded), colorSpace: role.srgb ? 'srgb' : 'linear', ...once }
}

/** The report fields of one encoding: its bytes, mode, and the size it was encoded at where that is not its own. */
function ktx2Report(encoded: Ktx2Encoding): Pick<TextureReport, 'to' | 'after' | 'mode' | 'resizedFrom' | 'size'> {
  return {
    to: 'image/ktx2',
    after: encoded.bytes.byteLength,
    mode: encoded.mode,
    ...(encoded.resizedFrom ? { resizedFrom: encoded.resizedFrom, size: [encoded.width, encoded.height] } : {}),
  }
}

interface Ktx2Encoding {
  bytes: Uint8Array
  mode: 'etc1s' | 'uastc'
  width: number
  height: number
  resizedFrom?: [number, number]
  /** Why it was encoded at another size than its own, naming both. */
  note?: string
}

async function encodeKtx2(
  image: ImageSource,
  options: TextureKtx2Options,
  role: { srgb: boolean; normalMap: boolean },
  label: string,
): Promise<Ktx2Encoding> {
  const pixels = await decodeRgba(options.encoder, image, options, label)
  const o = assignDefaults(TEXTURE_KTX2_DEFAULTS, options)
  const uastc = o.uastc || (role.normalMap && o.normalMapsUastc)
  const quality = o.uastc ? (options.quality ?? o.uastcQuality) : uastc ? o.uastcQuality : (options.quality ?? o.etc1sQuality)
  const bytes = encodeBasisKtx2(options.basis, pixels.data, pixels.width, pixels.height, {
    uastc,
    quality,
    srgb: role.srgb,
    normalMap: role.normalMap,
    mipmaps: true,
  })
  return {
    bytes,
    mode: uastc ? 'uastc' : 'etc1s',
    width: pixels.width,
    height: pixels.height,
    ...(pixels.resizedFrom ? { resizedFrom: pixels.resizedFrom, note: pixels.note } : {}),
  }
}

/**
 * Decodes to 8-bit RGBA at the size ktx2Size gives: images over the encoder's source-pixel cap are
 * halved until they fit (a 4096² texture becomes 2048²) rather than refused, and sides are rounded
 * up to multiples of 4 (250×130 becomes 252×132); the report and the task's notes say so.
 */
async function decodeRgba(
  encoder: SharpEncoder,
  bytes: ImageSource,
  limits: TextureLimits,
  label: string,
): Promise<{ data: Uint8Array; width: number; height: number; resizedFrom?: [number, number]; note?: string }> {
  try {
    const meta = await openImage(encoder, bytes, limits).metadata()
    const size = ktx2Size(meta.width ?? 0, meta.height ?? 0)
    const { width, height } = size
    const resized = width !== meta.width || height !== meta.height
    let pipeline = openImage(encoder, bytes, limits)
    if (resized) pipeline = pipeline.resize(width, height, { fit: 'fill', kernel: 'lanczos3' })
    // Grey, 16-bit and palette images all become 8-bit RGBA; colour profiles are not applied
    // (a texture's values are data to the GPU).
    const { data, info } = await pipeline.toColourspace('srgb').ensureAlpha().raw({ depth: 'uchar' }).toBuffer({ resolveWithObject: true })
    if (info.channels !== 4) throw new Error(`unexpected ${info.channels}-channel decode`)
    return {
      data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
      width: info.width,
      height: info.height,
      ...(resized ? { resizedFrom: [meta.width!, meta.height!], note: ktx2ResizeNote(label, [meta.width!, meta.height!], size) } : {}),
    }
  } catch (error) {
    throw imageDecodeError(error, label)
  }
}

export interface StandaloneKtx2Result {
  bytes: Uint8Array
  extension: 'ktx2'
  details: Record<string, unknown>
}

/**
 * Encodes a standalone PNG, JPEG or WebP image to a `.ktx2` file with mipmaps. A lone image has no
 * material slot to say what it holds, so it is treated as colour (sRGB).
 */
export async function encodeImageKtx2(bytes: Uint8Array, options: TextureKtx2Options): Promise<StandaloneKtx2Result> {
  checkKtx2Options(options)
  const header = checkTextureLimits(bytes, options, 'image')
  const encoded = await encodeKtx2(bytes, options, { srgb: true, normalMap: false }, 'image')
  const report: TextureReport = {
    name: 'image',
    from: header ? IMAGE_MIME_TYPES[header.format] : '',
    before: bytes.byteLength,
    ...ktx2Report(encoded),
    colorSpace: 'srgb',
  }
  const details = { width: encoded.width, height: encoded.height, textures: [report], ...(encoded.note ? { notes: [encoded.note] } : {}) }
  return { bytes: encoded.bytes, extension: 'ktx2', details }
}

/** The routes validate these (4.8); a bad value here would otherwise reach the encoder unchecked. */
function checkKtx2Options(options: TextureKtx2Options): void {
  if (options.quality === undefined) return
  const [min, max] = options.uastc ? [0, 4] : [1, 255]
  if (!Number.isInteger(options.quality) || options.quality < min || options.quality > max) {
    throw new ModelInputError(
      `${options.uastc ? 'UASTC' : 'ETC1S'} quality must be an integer from ${min} to ${max}, not ${options.quality}`,
    )
  }
}
