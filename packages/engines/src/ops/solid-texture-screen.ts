import type { Document } from '@gltf-transform/core'
import { jpegScanStart, readImageHeader } from '../io/image-header.ts'
import type { SharpEncoder } from './texture-optimize.ts'

/** glTF-Transform's prune() takes a texture for one colour when its RGBA range is this long or less (its EPS, in 0–255 steps). */
const SOLID_RANGE = 3
/**
 * What a reduced decode may add to a range: JPEG's shrink-on-load computes block means from the DCT
 * (unclamped, then rounded), not from the decoded pixels, so it can differ from them by a step or two.
 */
const SCREEN_MARGIN = 16
/** The longest side an image is looked at: a JPEG decodes at 1/8 scale in the DCT, many times faster. */
const SCREEN_SIDE = 256
/**
 * Coded bytes per pixel past which a JPEG is taken as varied without decoding it. A one-colour JPEG
 * codes each 8×8 block of a channel as a zero DC difference and an end of block: 6 bits with the
 * standard tables (0.01–0.03 bytes per pixel for three or four channels), at most 32 with any
 * Huffman table (0.19–0.25); the bench's generated 2048² textures code 0.37, and skipping their
 * decode saves 65 ms of a job on five of them. Where a one-colour JPEG should code more (stuffed
 * bytes, a restart marker per block), it stays a texture, as gltfpack leaves every texture: nothing
 * is lost but its factor.
 */
const SOLID_JPEG_MAX_BYTES_PER_PIXEL = 0.25

/**
 * Whether some texture of the document may be one colour, as glTF-Transform's `prune()` judges it;
 * false only when every image certainly is not. prune() decodes each image whole into a JavaScript
 * ndarray to find out (190–430 ms of a 330 ms meshopt job on a cube with five 2048² JPEGs, measured
 * 2026-11-27), while a texture that varies shows it at 256 px as well: a range that a reduced decode
 * sees (nearest pixels, or block means for a JPEG) is no longer than the whole image's, give or take
 * SCREEN_MARGIN. When this answers false, prune may keep solid textures without looking: it would
 * have found none. An image sharp cannot read (prune then counts it as not solid) or does not
 * decode to RGBA, as prune's own decode does, answers true: prune looks as it always did.
 *
 * ```ts
 * await doc.transform(prune({ keepSolidTextures: !(await maySomeTextureBeSolid(doc, sharp)) }))
 * ```
 */
export async function maySomeTextureBeSolid(doc: Document, sharp: SharpEncoder, decoded?: DecodedPixels): Promise<boolean> {
  const images = doc
    .getRoot()
    .listTextures()
    .map((texture) => texture.getImage())
    .filter((image) => image !== null)
  const verdicts = await Promise.all(images.map((image) => mayBeSolid(sharp, image, decoded)))
  return verdicts.some(Boolean)
}

/**
 * An image's whole RGBA decode where one is under way for another step (lossless-textures.ts's
 * `pixelsOf`), undefined where not. Its range is at least the reduced decode's (the nearest pixels
 * are some of its pixels), so it is looked at in place of decoding again.
 */
export type DecodedPixels = (image: Uint8Array) => Promise<{ data: Uint8Array } | undefined> | undefined

async function mayBeSolid(sharp: SharpEncoder, image: Uint8Array, decoded?: DecodedPixels): Promise<boolean> {
  if (codesTooMuchForOneColour(image)) return false
  // Awaited only where there is one: the other images' reduced decodes are asked for at once.
  const pending = decoded?.(image)
  const whole = pending && (await pending)
  if (whole) return rangeWithin(whole.data, SOLID_RANGE + SCREEN_MARGIN)
  try {
    const { data, info } = await sharp(image)
      .resize(SCREEN_SIDE, SCREEN_SIDE, { fit: 'inside', withoutEnlargement: true, kernel: 'nearest' })
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true })
    if (info.channels !== 4) return true
    return rangeWithin(data, SOLID_RANGE + SCREEN_MARGIN)
  } catch {
    return true
  }
}

/** Pixels between two looks at the range so far (see rangeWithin). */
const RANGE_LOOK_EVERY = 256

/**
 * Whether RGBA pixels span at most `limit` (the length of their per-channel range, as prune measures
 * it). A range only grows, so it is looked at every RANGE_LOOK_EVERY pixels and a varied image is
 * answered within its first rows: going through every pixel took ClearCoatTest ~17 ms a job on the
 * engine thread (profiled), while sharp's reduced decode runs on its own threads.
 */
function rangeWithin(data: Uint8Array, limit: number): boolean {
  const min = [255, 255, 255, 255]
  const max = [0, 0, 0, 0]
  const span = () => Math.hypot(max[0]! - min[0]!, max[1]! - min[1]!, max[2]! - min[2]!, max[3]! - min[3]!)
  for (let at = 0; at < data.length; at += 4) {
    for (let k = 0; k < 4; k++) {
      const value = data[at + k]!
      if (value < min[k]!) min[k] = value
      if (value > max[k]!) max[k] = value
    }
    if ((at >> 2) % RANGE_LOOK_EVERY === RANGE_LOOK_EVERY - 1 && span() > limit) return false
  }
  return span() <= limit
}

/** A JPEG whose entropy-coded data is longer than any one-colour image of its size needs (see above). */
function codesTooMuchForOneColour(image: Uint8Array): boolean {
  const header = readImageHeader(image)
  if (header?.format !== 'jpeg') return false
  const scan = jpegScanStart(image)
  return scan > 0 && image.byteLength - scan > header.width * header.height * SOLID_JPEG_MAX_BYTES_PER_PIXEL
}
