import type sharpModule from 'sharp'
import { DECODED_IMAGE_MAX_PIXELS } from './tga.ts'
import type { ResolveFile } from './upload-files.ts'

/** What decodes the images glTF cannot hold: sharp, passed in by the worker that loaded it. */
export interface ForeignImageDecoder {
  sharp: typeof sharpModule
  /** Hears the notes on what a decoded image lost (an animated GIF's frames after the first). */
  warn: (text: string) => void
}

/**
 * Image formats that textures of OBJ, COLLADA, FBX, PLY and glTF 1.0 models come in, that glTF does
 * not hold, and that sharp's prebuilt libvips decodes (sharp.format: gif, tiff, and heif, which reads
 * AVIF only: no HEVC decoder ships with it, so a HEIC stays a foreign image). Told by magic number.
 */
const DECODED: [RegExp, string][] = [
  [/^GIF8[79]a/, 'GIF'],
  [/^(II\*\0|MM\0\*)/, 'TIFF'],
  // An ISO-BMFF file whose brands (major, or a compatible one: some write mif1 first) name AVIF.
  [/^[\s\S]{4}ftyp[\s\S]{0,24}avi[fs]/, 'AVIF'],
]

/** Decoded files and, by their new bytes, the notes to give when a model references them. */
export interface DecodedUpload {
  files: Map<string, Uint8Array>
  notes: Map<Uint8Array, string>
}

/**
 * The upload's files with every GIF, TIFF and AVIF re-encoded as PNG (alpha kept; an animated GIF's
 * first frame, noted), so that every reader finding a texture through the upload's resolver gets an
 * image glTF holds. Done on the files, before the model is read, because the readers are synchronous
 * and sharp is not. Decoding is bounded as TGA and BMP are (DECODED_IMAGE_MAX_PIXELS); a file sharp
 * cannot decode (damaged, larger) keeps its bytes and is dropped by the reader with its note.
 */
export async function decodeForeignImages(files: ReadonlyMap<string, Uint8Array>, sharp: typeof sharpModule): Promise<DecodedUpload> {
  const out = new Map(files)
  const notes = new Map<Uint8Array, string>()
  for (const [path, bytes] of files) {
    const kind = foreignKind(bytes)
    if (!kind) continue
    try {
      // pages: 1 is the first frame of an animated GIF (or the first page of a multi-page TIFF).
      const image = sharp(bytes, { limitInputPixels: DECODED_IMAGE_MAX_PIXELS, pages: 1 })
      const { pages } = await image.metadata()
      const png = new Uint8Array(await image.png().toBuffer())
      out.set(path, png)
      if (pages !== undefined && pages > 1) {
        const what = kind === 'GIF' ? `an animated GIF of ${pages} frames: its first frame` : `a ${kind} of ${pages} pages: its first page`
        notes.set(png, `is ${what} is kept, as a PNG`)
      }
    } catch {
      // The reader names the file as one Mos could not decode (unusableImageNote).
    }
  }
  return { files: out, notes }
}

/** The resolver of a decoded upload: as `resolve`, telling `warn` once about each file with a note the model references. */
export function notingResolver(resolve: ResolveFile, notes: Map<Uint8Array, string>, warn: (text: string) => void): ResolveFile {
  const told = new Set<Uint8Array>()
  return (reference) => {
    const found = resolve(reference)
    const note = found && notes.get(found)
    if (found && note && !told.has(found)) {
      told.add(found)
      warn(`texture "${reference}" ${note}`)
    }
    return found
  }
}

function foreignKind(bytes: Uint8Array): string | undefined {
  const head = String.fromCharCode(...bytes.subarray(0, 32))
  return DECODED.find(([magic]) => magic.test(head))?.[1]
}
