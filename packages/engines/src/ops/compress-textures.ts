import type { Document, Texture } from '@gltf-transform/core'
import type { BasisModule } from '../basis-encoder.ts'
import { textureKtx2 } from './texture-ktx2.ts'
import type { TextureLimits } from './texture-limits.ts'
import { textureOptimize, type SharpEncoder } from './texture-optimize.ts'
import { leftAsItWasNote, type TextureReport } from './texture-report.ts'
import type { ResizedPixels } from './resized-pixels.ts'

/** The formats compress's `texture_format` re-encodes textures to (docs/textures.md). */
export type CompressTextureFormat = 'webp' | 'jpeg' | 'png' | 'ktx2'

export interface CompressTexturesOptions extends TextureLimits {
  format: CompressTextureFormat
  /** JPEG and WebP only: quality 1–100 (texture_optimize's default when not given). */
  quality?: number
  /** Normal maps re-encoded like the other textures: lossy JPEG/WebP, or ETC1S in KTX2 (otherwise UASTC). */
  lossyNormalMaps?: boolean
  sharp: SharpEncoder
  /** The Basis Universal module; needed for `ktx2` only. */
  basis?: BasisModule
  /** Textures encoded at once (JPEG, WebP, PNG; KTX2 encodes one at a time). */
  imageThreads?: number
  /** Where each texture left as it was, and each KTX2 resize, is said (the task's `details.notes`). */
  notes?: string[]
  /** The pixels `texture_max_size` resized, encoded in place of their resize's lossy coding (one generation of loss). */
  pixels?: ResizedPixels
}

/** What compress's texture step did: a report per texture, and the textures it did not touch. */
export interface CompressTexturesResult {
  reports: TextureReport[]
  /** Textures whose image the step left byte for byte as it was. */
  untouched: Set<Texture>
}

/**
 * Re-encodes every texture of a compressed model to the format asked (compress's `texture_format`)
 * with the texture operations' own transforms, so it means exactly what `POST /textures/optimize`
 * and `POST /textures/ktx2` mean: normal maps lossless (UASTC in KTX2) unless `lossyNormalMaps`, a
 * JPEG/WebP/PNG re-encoding never larger than the texture's smallest coding, the same texture limits.
 * Answers which textures it left untouched: after a KTX2 encoding, the only ones left for the
 * lossless re-coding (compress.ts's encodeTextures says why JPEG, WebP and PNG run after it instead).
 *
 * ```ts
 * const { reports, untouched } = await reencodeTextures(doc, { format: 'webp', sharp })
 * await recodeTexturesLosslessly(doc, { sharp, only: untouched })
 * ```
 */
export async function reencodeTextures(doc: Document, options: CompressTexturesOptions): Promise<CompressTexturesResult> {
  const textures = doc.getRoot().listTextures()
  const before = new Map(textures.map((texture) => [texture, texture.getImage()]))
  const reports: TextureReport[] = []
  const notes = options.notes ?? []
  // The limits, and the resized pixels the texture transforms encode in place of their lossy coding.
  const shared = { maxTextureBytes: options.maxTextureBytes, maxPixels: options.maxPixels, pixels: options.pixels }
  if (options.format === 'ktx2') {
    if (!options.basis) throw new Error('KTX2 textures need the Basis Universal encoder')
    // texture_ktx2's defaults (ETC1S at quality 128); normal maps UASTC unless asked lossy like the rest.
    const normalMapsUastc = !options.lossyNormalMaps
    await doc.transform(textureKtx2({ ...shared, encoder: options.sharp, basis: options.basis, normalMapsUastc, report: reports, notes }))
  } else {
    const { format, quality, lossyNormalMaps } = options
    const concurrency = options.imageThreads ?? 1
    await doc.transform(
      textureOptimize({ ...shared, encoder: options.sharp, format, quality, lossyNormalMaps, concurrency, report: reports }),
    )
  }
  for (const report of reports) if (report.skipped) notes.push(leftAsItWasNote(report.name, report.skipped))
  const required = requiredTextureExtension(doc)
  if (required) notes.push(required)
  options.pixels?.clear() // encoded: their memory goes now, not with the task
  const untouched = new Set(textures.filter((texture) => texture.getImage() === before.get(texture)))
  return { reports, untouched }
}

/** The texture extensions a viewer must know to open the file at all, by MIME type. */
const REQUIRED_BY_MIME: Record<string, { extension: string; format: string }> = {
  'image/webp': { extension: 'EXT_texture_webp', format: 'WebP' },
  'image/ktx2': { extension: 'KHR_texture_basisu', format: 'KTX2' },
}

/**
 * What the target loses to its texture format: a viewer that does not know EXT_texture_webp or
 * KHR_texture_basisu cannot open the file at all, since both are declared required (a glTF texture
 * has no fallback image in Mos's files). Undefined where no texture needs either.
 */
function requiredTextureExtension(doc: Document): string | undefined {
  const needed = new Map<string, number>()
  for (const texture of doc.getRoot().listTextures()) {
    const mime = texture.getMimeType()
    if (REQUIRED_BY_MIME[mime]) needed.set(mime, (needed.get(mime) ?? 0) + 1)
  }
  const parts = [...needed].map(([mime, count]) => {
    const { extension, format } = REQUIRED_BY_MIME[mime]!
    return `${count} texture${count === 1 ? ' is' : 's are'} ${format}, declared with ${extension} as a required extension: a viewer that does not read it cannot open the file`
  })
  return parts.length > 0 ? parts.join('; ') : undefined
}
