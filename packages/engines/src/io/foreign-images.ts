import { createHash } from 'node:crypto'
import type sharpModule from 'sharp'
import { DECODED_IMAGE_MAX_PIXELS } from './tga.ts'
import type { ResolveFile } from './upload-files.ts'

/**
 * Image formats that textures of OBJ, COLLADA, FBX, PLY and glTF 1.0 models come in, that glTF does
 * not hold, and that sharp's prebuilt libvips decodes (sharp.format: gif, tiff, and heif, which reads
 * AVIF only: no HEVC decoder ships with it, so a HEIC stays a foreign image). Told by magic number;
 * `what` names one in a note when sharp could not decode it (image-files.ts).
 */
export const SHARP_DECODED: { magic: RegExp; kind: string; what: string }[] = [
  { magic: /^GIF8/, kind: 'GIF', what: 'a GIF image' },
  { magic: /^(II\*\0|MM\0\*)/, kind: 'TIFF', what: 'a TIFF image' },
  // An ISO-BMFF file whose brands (major, or a compatible one: some write mif1 first) name AVIF.
  { magic: /^[\s\S]{4}ftyp[\s\S]{0,24}avi[fs]/, kind: 'AVIF', what: 'an AVIF image' },
]

/** A GIF, TIFF or AVIF as sharp decoded it: a PNG, and what it lost (an animated GIF's later frames). */
export interface DecodedImage {
  png: Uint8Array
  /** Told after the texture's name: 'is an animated GIF of 2 frames: its first frame is kept, as a PNG'. */
  note?: string
}

/**
 * The GIF, TIFF and AVIF images a model's readers met, and the PNGs sharp made of them: only the images
 * the model references or embeds are decoded, never the rest of a zip (a folder of scans beside the
 * model). Each image met is recorded as wanted; a reader that is asynchronous where it finds its images
 * (assimp's, glTF 1.0's) decodes them then and carries on. The OBJ and PLY readers are synchronous, and
 * sharp is not: such a model is read once asking (its wanted images dropped), they are decoded, and it
 * is read again finding them (readModel in index.ts); a model without such an image is read once.
 * Images are known by their bytes' digest, the same whether a zip's file or embedded.
 */
export interface ForeignImages {
  /** The PNG of a GIF, TIFF or AVIF decoded before; undefined for other bytes, and for one not decoded (then wanted) or undecodable. */
  decoded(bytes: Uint8Array): DecodedImage | undefined
  /** Whether an image met since the last {@link ForeignImages.decodeWanted} waits to be decoded. */
  hasWanted(): boolean
  /**
   * Decodes the wanted images with sharp (alpha kept; an animated GIF's first frame, noted), bounded as
   * TGA and BMP are (DECODED_IMAGE_MAX_PIXELS); one sharp cannot decode (damaged, larger) stays undecoded,
   * and the reader drops it with its note (unusableImageNote).
   */
  decodeWanted(): Promise<void>
  /** How many images sharp was asked to decode, for tests to see that unreferenced files are not. */
  readonly decodeCount: number
}

/** A new, empty record of a read's foreign images, decoded by `sharp` (passed in by the worker that loaded it; see {@link ForeignImages}). */
export function createForeignImages(sharp: typeof sharpModule): ForeignImages {
  const wanted = new Map<string, { bytes: Uint8Array; kind: string }>()
  // null: sharp could not decode it; not asked again on a later read.
  const done = new Map<string, DecodedImage | null>()
  let decodeCount = 0
  return {
    decoded(bytes) {
      const kind = foreignKind(bytes)
      if (!kind) return undefined
      const key = createHash('sha1').update(bytes).digest('hex')
      if (done.has(key)) return done.get(key) ?? undefined
      wanted.set(key, { bytes, kind })
      return undefined
    },
    hasWanted: () => wanted.size > 0,
    async decodeWanted() {
      for (const [key, { bytes, kind }] of wanted) {
        decodeCount++
        done.set(key, await decodeWithSharp(sharp, bytes, kind).catch(() => null))
      }
      wanted.clear()
    },
    get decodeCount() {
      return decodeCount
    },
  }
}

async function decodeWithSharp(sharp: typeof sharpModule, bytes: Uint8Array, kind: string): Promise<DecodedImage> {
  // pages: 1 is the first frame of an animated GIF (or the first page of a multi-page TIFF).
  const image = sharp(bytes, { limitInputPixels: DECODED_IMAGE_MAX_PIXELS, pages: 1 })
  const { pages } = await image.metadata()
  const png = new Uint8Array(await image.png().toBuffer())
  if (pages === undefined || pages <= 1) return { png }
  const what = kind === 'GIF' ? `an animated GIF of ${pages} frames: its first frame` : `a ${kind} of ${pages} pages: its first page`
  return { png, note: `is ${what} is kept, as a PNG` }
}

/**
 * The resolver of a zip's files with its GIF, TIFF and AVIF files as the PNGs `images` decoded, telling
 * `warn` once about each such file with a note the model references; one not decoded yet is given as
 * it is (and is now wanted).
 */
export function decodingResolver(resolve: ResolveFile, images: ForeignImages, warn: (text: string) => void): ResolveFile {
  const told = new Set<Uint8Array>()
  return (reference) => {
    const found = resolve(reference)
    const decoded = found && images.decoded(found)
    if (!decoded) return found
    if (decoded.note && !told.has(decoded.png)) {
      told.add(decoded.png)
      warn(`texture "${reference}" ${decoded.note}`)
    }
    return decoded.png
  }
}

function foreignKind(bytes: Uint8Array): string | undefined {
  const head = String.fromCharCode(...bytes.subarray(0, 32))
  return SHARP_DECODED.find(({ magic }) => magic.test(head))?.kind
}
