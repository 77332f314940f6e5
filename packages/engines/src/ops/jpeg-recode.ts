import type { Document, Texture } from '@gltf-transform/core'
import { readJpegCoefficients } from '../io/jpeg-coefficients.ts'
import { writeProgressiveJpeg } from '../io/jpeg-progressive.ts'
import { recodeJpegHuffman } from '../io/jpeg-recode.ts'
import type { TextureReport } from './texture-report.ts'
import { describeTexture } from './texture-roles.ts'

/**
 * The largest JPEG re-coded, in bytes: its symbols take 4 bytes each, about 8 bytes a byte of the
 * file, held twice (the symbols and the check of what was written): some 130 MB and 1–2 s of the
 * task's thread for an 8 MB texture.
 */
export const RECODE_MAX_BYTES = 8 * 1024 * 1024

export interface JpegRecodeOptions {
  /** Also try each JPEG as progressive (compress's `texture_progressive_jpeg`), kept where smaller. */
  progressive?: boolean
  maxBytes?: number
  /** Only these textures (those the target writes); every one when not given. */
  only?: ReadonlySet<Texture>
}

/**
 * Re-codes every JPEG texture with the smallest Huffman tables for its own coefficients
 * (`recodeJpegHuffman`, as `jpegtran -optimize`), where that is smaller: lossless, so compress does
 * it on every run, where gltfpack copies images as they are. Many exporters write T.81's example
 * tables: ClearCoatTest's normal map 144 210 → 122 503 B, the assimp corpus's JPEGs 2–31% smaller.
 * With `progressive`, each is also written as a progressive JPEG (as `jpegtran -progressive`: the
 * same coefficients, 2–7% smaller on textures over 30 KB) and the smaller of the two kept.
 * Answers a report per texture re-coded; arithmetic-coded JPEGs, already progressive ones, any the
 * re-coder does not fully understand, and any over `maxBytes` stay as they are.
 *
 * ```ts
 * const recoded = recodeJpegTextures(doc, { progressive: true })
 * ```
 */
export function recodeJpegTextures(doc: Document, options: JpegRecodeOptions = {}): TextureReport[] {
  const reports: TextureReport[] = []
  for (const texture of doc.getRoot().listTextures()) {
    if (texture.getMimeType() !== 'image/jpeg' || !(options.only?.has(texture) ?? true)) continue
    const { image, base } = describeTexture(doc, texture)
    const smaller = image && smallerJpegCoding(image, options)
    if (!smaller) continue
    texture.setImage(smaller.bytes)
    reports.push({ ...base, to: 'image/jpeg', after: smaller.bytes.byteLength, ...(smaller.progressive ? { progressive: true } : {}) })
  }
  return reports
}

/**
 * The smallest lossless coding of a JPEG's own coefficients (the same pixels): its smallest Huffman
 * tables, or with `progressive` also a progressive JPEG, whichever is smaller; undefined where
 * neither is smaller than the JPEG as it is, or it is over `maxBytes`.
 */
export function smallerJpegCoding(
  image: Uint8Array,
  options: JpegRecodeOptions = {},
): { bytes: Uint8Array; progressive: boolean } | undefined {
  const { progressive = false, maxBytes = RECODE_MAX_BYTES } = options
  if (image.byteLength > maxBytes) return undefined
  const sequential = recodeJpegHuffman(image)
  const layered = progressive ? progressiveJpeg(image) : undefined
  if (layered && layered.byteLength < (sequential ?? image).byteLength) return { bytes: layered, progressive: true }
  return sequential && { bytes: sequential, progressive: false }
}

/** The JPEG as progressive, or undefined where it is not a sequential JPEG this reader takes (or too large: MAX_COEFFICIENTS). */
function progressiveJpeg(image: Uint8Array): Uint8Array | undefined {
  const coefficients = readJpegCoefficients(image)
  return coefficients && writeProgressiveJpeg(coefficients)
}
