import type { Document } from '@gltf-transform/core'
import { recodeJpegHuffman } from '../io/jpeg-recode.ts'
import type { TextureReport } from './texture-report.ts'
import { describeTexture } from './texture-roles.ts'

/**
 * The largest JPEG re-coded, in bytes: its symbols take 4 bytes each, about 8 bytes a byte of the
 * file, held twice (the symbols and the check of what was written): some 130 MB and 1–2 s of the
 * task's thread for an 8 MB texture.
 */
export const RECODE_MAX_BYTES = 8 * 1024 * 1024

/**
 * Re-codes every JPEG texture with the smallest Huffman tables for its own coefficients
 * (`recodeJpegHuffman`, as `jpegtran -optimize`), where that is smaller: lossless, so compress does
 * it on every run, where gltfpack copies images as they are. Many exporters write T.81's example
 * tables: ClearCoatTest's normal map 144 210 → 122 503 B, the assimp corpus's JPEGs 2–31% smaller.
 * Answers a report per texture re-coded; progressive and arithmetic-coded JPEGs, any the re-coder
 * does not fully understand, and any over `maxBytes`, stay as they are.
 *
 * ```ts
 * const recoded = recodeJpegTextures(doc)
 * ```
 */
export function recodeJpegTextures(doc: Document, maxBytes = RECODE_MAX_BYTES): TextureReport[] {
  const reports: TextureReport[] = []
  for (const texture of doc.getRoot().listTextures()) {
    if (texture.getMimeType() !== 'image/jpeg') continue
    const { image, base } = describeTexture(doc, texture)
    const smaller = image && image.byteLength <= maxBytes && recodeJpegHuffman(image)
    if (!smaller) continue
    texture.setImage(smaller)
    reports.push({ ...base, to: 'image/jpeg', after: smaller.byteLength })
  }
  return reports
}
