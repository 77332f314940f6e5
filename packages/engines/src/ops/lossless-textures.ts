import { type Document, PropertyType, type Texture } from '@gltf-transform/core'
import { readImageHeader } from '../io/image-header.ts'
import type { RgbaImage } from '../io/tga.ts'
import { smallerJpegCoding } from './jpeg-recode.ts'
import { mapLimited } from './map-limited.ts'
import { MIN_AT_ONCE, type PngRepackOptions, repackablePixels, smallerFromPixels, smallerPng } from './png-repack.ts'
import type { SharpEncoder } from './texture-optimize.ts'
import type { TextureReport } from './texture-report.ts'
import { describeTexture } from './texture-roles.ts'

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

/** A texture's smaller coding (undefined: it stays as it is), or why working it out failed. */
type Outcome = { ok: true; smaller: { bytes: Uint8Array; progressive?: boolean } | undefined } | { ok: false; error: unknown }

/** The outcome worked out for one image's bytes. */
interface Started {
  image: Uint8Array
  outcome: Promise<Outcome>
}

/**
 * Every PNG and JPEG texture re-coded as the smallest file of exactly its pixels, where smaller
 * (png-repack.ts, jpeg-recode.ts): what compress and convert do to the images they carry. The PNGs' decoding and deflating run on libuv's threads while this thread re-codes the
 * JPEGs. Answers a report per texture re-coded: the PNGs first, then the JPEGs, each in the document's order.
 *
 * ```ts
 * const repacked = await recodeTexturesLosslessly(doc, { sharp, imageThreads: 1 })
 * ```
 */
export async function recodeTexturesLosslessly(doc: Document, options: LosslessTexturesOptions): Promise<TextureReport[]> {
  return recodeTexturesAhead(doc, options).apply()
}

/** Texture re-coding under way (recodeTexturesAhead). */
export interface TextureRecoding {
  /** Applies the outcomes to the textures the document holds now, answering their reports. */
  apply(): Promise<TextureReport[]>
  /**
   * A PNG's pixels as the re-pack decodes them (8-bit RGBA), where that decode is under way: for
   * another look at the image (the solid-texture screen) not to decode it again. Undefined for others.
   */
  pixelsOf(image: Uint8Array): Promise<RgbaImage | undefined> | undefined
}

/**
 * The most pixels of PNGs decoded at once, ahead of their re-packs (4 bytes each: 16 MB): within it,
 * every PNG is decoded at the start, so the solid-texture screen reads the same decodes (ClearCoatTest:
 * 5–10 ms of CPU a job it spent decoding the five PNGs again); beyond it, the re-packs decode as they go.
 */
const AHEAD_DECODE_MAX_PIXELS = 4 * 1024 * 1024

/**
 * Starts working out every used PNG and JPEG texture's smaller coding before a step that may drop
 * some of them (compress's prune), since that coding depends on the image's bytes alone: the PNGs
 * decode and deflate on sharp's and libuv's threads, and the JPEGs are re-coded once the caller's
 * step first waits (for the solid-texture screen's decodes), where this thread would otherwise idle.
 * `apply` applies the outcomes to the textures the document still holds, as
 * recodeTexturesLosslessly would have then (the same reports, in the same order; the first failure
 * of such a texture fails it), and drops those of the textures gone.
 *
 * ```ts
 * const recoding = recodeTexturesAhead(doc, { sharp })
 * await doc.transform(prune())
 * const repacked = await recoding.apply()
 * ```
 */
export function recodeTexturesAhead(doc: Document, options: LosslessTexturesOptions): TextureRecoding {
  // A texture only the root holds goes with the prune: not worth starting.
  const used = doc
    .getRoot()
    .listTextures()
    .filter((texture) => texture.listParents().some((parent) => parent.propertyType !== PropertyType.ROOT))
  const pngs = startPngs(pngsOf(used, options), options)
  const started = new Map<Texture, Started>([...pngs.started, ...startJpegs(jpegsOf(used, options), options)])
  const apply = async () => {
    // Described now, as they are after the caller's step (labels number the textures left), in one go.
    const textures = doc.getRoot().listTextures()
    const todo = [...pngsOf(textures, options), ...jpegsOf(textures, options)].map((texture) => ({
      texture,
      ...describeTexture(doc, texture),
    }))
    const reports: TextureReport[] = []
    for (const { texture, image, base, from } of todo) {
      const ahead = started.get(texture)
      const outcome = await (ahead?.image === image ? ahead.outcome : startOne(texture, image, options))
      if (!outcome.ok) throw outcome.error
      if (!outcome.smaller) continue
      const { bytes, progressive } = outcome.smaller
      texture.setImage(bytes)
      reports.push({ ...base, to: from, after: bytes.byteLength, ...(progressive ? { progressive: true } : {}) })
    }
    return reports
  }
  // A decode that fails is the re-pack's failure to report; another look takes it as no pixels.
  return { apply, pixelsOf: (image) => pngs.decodes.get(image)?.catch(() => undefined) }
}

function pngsOf(textures: Texture[], options: LosslessTexturesOptions): Texture[] {
  if (!options.sharp) return []
  return textures.filter((texture) => texture.getMimeType() === 'image/png' && (options.only?.has(texture) ?? true))
}

function jpegsOf(textures: Texture[], options: LosslessTexturesOptions): Texture[] {
  return textures.filter((texture) => texture.getMimeType() === 'image/jpeg' && (options.only?.has(texture) ?? true))
}

function pngOptions(options: LosslessTexturesOptions & { sharp: SharpEncoder }): PngRepackOptions {
  return { sharp: options.sharp, concurrency: options.imageThreads ?? 1, keepWith: options.keepPngsWith }
}

/**
 * The PNGs' re-packs, MIN_AT_ONCE or the image threads at a time (see repackPngTextures); within
 * AHEAD_DECODE_MAX_PIXELS, every one decoded at the start, the decodes kept for others to read.
 */
function startPngs(
  pngs: Texture[],
  options: LosslessTexturesOptions,
): { started: [Texture, Started][]; decodes: Map<Uint8Array, Promise<RgbaImage | undefined>> } {
  const decodes = new Map<Uint8Array, Promise<RgbaImage | undefined>>()
  const sharp = options.sharp
  if (!sharp || pngs.length === 0) return { started: [], decodes }
  const repack = pngOptions({ ...options, sharp })
  const images = pngs.map((texture) => texture.getImage())
  const pixels = images.reduce((sum, image) => sum + pixelCount(image), 0)
  if (pixels <= AHEAD_DECODE_MAX_PIXELS)
    for (const image of images) {
      if (!image || decodes.has(image)) continue
      const decoded = repackablePixels(image, repack)
      decoded.catch(() => {}) // handled where its re-pack awaits it, maybe later than it fails
      decodes.set(image, decoded)
    }
  const repackOne = async (image: Uint8Array) => {
    const decoded = decodes.get(image)
    if (!decoded) return smallerPng(image, repack)
    const rgba = await decoded
    return rgba && smallerFromPixels(image, rgba)
  }
  const atOnce = Math.max(MIN_AT_ONCE, repack.concurrency)
  const outcomes = mapLimited(images, atOnce, (image) => settled(image ? repackOne(image) : Promise.resolve(undefined)))
  const started = pngs.flatMap((texture, i): [Texture, Started][] => {
    const image = images[i]
    return image ? [[texture, { image, outcome: outcomes.then((all) => all[i]!) }]] : []
  })
  return { started, decodes }
}

/** A PNG's pixels by its header (0 where it has none). */
function pixelCount(image: Uint8Array | null): number {
  const header = image && readImageHeader(image)
  return header ? header.width * header.height : 0
}

/** The JPEGs' re-codings, once the caller first waits: this thread's work, done while the others decode. */
function startJpegs(jpegs: Texture[], options: LosslessTexturesOptions): [Texture, Started][] {
  const images = jpegs.map((texture) => texture.getImage())
  const outcomes = Promise.resolve().then(() => images.map((image) => (image ? jpegOutcome(image, options) : undefined)))
  return jpegs.flatMap((texture, i) => {
    const image = images[i]
    return image ? [[texture, { image, outcome: outcomes.then((all) => all[i]!) }]] : []
  })
}

/** One texture's outcome, worked out now: one the caller's step added, or whose image it changed. */
function startOne(texture: Texture, image: Uint8Array | null, options: LosslessTexturesOptions): Promise<Outcome> {
  if (!image) return settled(Promise.resolve(undefined))
  if (texture.getMimeType() === 'image/jpeg') return Promise.resolve(jpegOutcome(image, options))
  return settled(smallerPng(image, pngOptions({ ...options, sharp: options.sharp! })))
}

function jpegOutcome(image: Uint8Array, options: LosslessTexturesOptions): Outcome {
  try {
    return { ok: true, smaller: smallerJpegCoding(image, { progressive: options.progressive }) }
  } catch (error) {
    return { ok: false, error }
  }
}

/** A promise that never rejects: an outcome nobody awaits (its texture gone) must not be an unhandled rejection. */
function settled(smaller: Promise<Uint8Array | undefined>): Promise<Outcome> {
  return smaller.then(
    (bytes) => ({ ok: true, smaller: bytes && { bytes } }),
    (error: unknown) => ({ ok: false, error }),
  )
}
