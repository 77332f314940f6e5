import type { Document, Texture } from '@gltf-transform/core'
import { recodeJpegTextures } from './jpeg-recode.ts'
import { repackPngTextures } from './png-repack.ts'
import type { SharpEncoder } from './texture-optimize.ts'
import type { TextureReport } from './texture-report.ts'

export interface LosslessTexturesOptions {
  /** sharp decodes the PNGs; without it they stay as they are. */
  sharp?: SharpEncoder
  /** The thread's image threads (1 when not given); see repackPngTextures for how many PNGs it re-packs at once. */
  imageThreads?: number
  /** JPEGs also tried as progressive JPEGs (texture_progressive_jpeg). */
  progressive?: boolean
  /** PNGs carrying any of these chunk types stay as they are (see repackPngTextures). */
  keepPngsWith?: ReadonlySet<string>
  /** Only these textures: those the target writes (convert to OBJ leaves metallic-roughness maps out). Every one when not given. */
  only?: ReadonlySet<Texture>
}

/**
 * Every PNG and JPEG texture re-coded as the smallest file of exactly its pixels, where smaller
 * (png-repack.ts, jpeg-recode.ts): what compress and convert do to the images they carry. The PNGs' decoding and deflating run on libuv's threads while this thread re-codes the
 * JPEGs. Answers a report per texture re-coded.
 *
 * ```ts
 * const repacked = await recodeTexturesLosslessly(doc, { sharp, imageThreads: 1 })
 * ```
 */
export async function recodeTexturesLosslessly(doc: Document, options: LosslessTexturesOptions): Promise<TextureReport[]> {
  const pngs = options.sharp
    ? repackPngTextures(doc, {
        sharp: options.sharp,
        concurrency: options.imageThreads ?? 1,
        keepWith: options.keepPngsWith,
        only: options.only,
      })
    : Promise.resolve([])
  const jpegs = recodeJpegTextures(doc, { progressive: options.progressive, only: options.only })
  return [...(await pngs), ...jpegs]
}
