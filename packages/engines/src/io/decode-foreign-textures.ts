import { createHash } from 'node:crypto'
import type { Document, Texture } from '@gltf-transform/core'
import type sharpModule from 'sharp'
import { foreignTextureNotes, sharpDecodedKind } from './foreign-images.ts'
import { foreignTextureNote } from './image-files.ts'
import { DECODED_IMAGE_MAX_PIXELS } from './tga.ts'

/** Options of {@link decodeForeignTextures}. */
export interface DecodeForeignTexturesOptions {
  /** sharp, passed in by the caller (the worker loaded it); without it every such texture is dropped with its note. */
  sharp?: typeof sharpModule
  /** The reader's name in the notes of a texture no reader named (a GIF in a glTF 2.0 file): `[glb] texture "a.gif" ...`. */
  reader: string
}

/** A GIF, TIFF or AVIF as sharp decoded it: a PNG, and what it lost (an animated GIF's later frames). */
interface DecodedImage {
  png: Uint8Array
  /** Told after the texture's name: 'is an animated GIF of 2 frames: its first frame is kept, as a PNG'. */
  note?: string
}

/**
 * The one asynchronous step of a read (readModel, index.ts), after the reader: every texture of `doc`
 * that is a GIF, TIFF or AVIF (kept as found by its reader, foreign-images.ts) becomes a PNG through
 * sharp (alpha kept; an animated GIF's first frame, a multi-page TIFF's first page, noted), bounded
 * as TGA and BMP are (DECODED_IMAGE_MAX_PIXELS); its MIME type and URI's extension follow. The same
 * bytes in several textures are decoded once. One sharp cannot decode (damaged, larger) is dropped
 * (disposed, which empties the slots that held it) with the note its reader would have given.
 * Only the model's textures are looked at: a zip's other files never reach sharp.
 *
 * @example
 * const doc = readObj(bytes, { resolve })
 * await decodeForeignTextures(doc, { sharp, reader: 'obj' })
 */
export async function decodeForeignTextures(doc: Document, options: DecodeForeignTexturesOptions): Promise<void> {
  const { sharp } = options
  const logger = doc.getLogger()
  const decoded = new Map<string, Promise<DecodedImage | undefined>>()
  const textures = doc.getRoot().listTextures()
  const usedUris = new Set(textures.map((texture) => texture.getURI().toLowerCase()))
  for (const texture of textures) {
    const bytes = texture.getImage()
    const kind = bytes && sharpDecodedKind(bytes)
    if (!bytes || !kind) continue
    const key = createHash('sha1').update(bytes).digest('hex')
    let image = decoded.get(key)
    if (!image) {
      image = sharp ? decodeWithSharp(sharp, bytes, kind.kind).catch(() => undefined) : Promise.resolve(undefined)
      decoded.set(key, image)
    }
    const result = await image
    const notes = foreignTextureNotes(texture)
    // A texture no reader named (a glTF 2.0 file's own GIF) goes by its URI, or else its name.
    const said = notes.length > 0 ? notes : [foreignTextureNote(options.reader, textureName(texture), bytes)]
    if (!result) {
      for (const note of said) {
        note.undo?.()
        if (note.dropped) logger.warn(note.dropped)
      }
      texture.dispose()
      continue
    }
    texture.setImage(result.png).setMimeType('image/png')
    renameAsPng(texture, usedUris)
    const lost = result.note
    if (lost) for (const note of said) if (note.partly) logger.warn(note.partly(lost))
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

function textureName(texture: Texture): string {
  const uri = texture.getURI()
  return (uri && !uri.startsWith('data:') ? uri : texture.getName()) || 'texture'
}

/** The texture's URI with a .png extension (`wood.gif` → `wood.png`), another texture's URI not taken (`wood-1.png`). */
function renameAsPng(texture: Texture, usedUris: Set<string>): void {
  const uri = texture.getURI()
  if (!uri || uri.startsWith('data:')) return
  const stem = uri.replace(/\.[^./\\]*$/, '')
  let renamed = `${stem}.png`
  for (let n = 1; usedUris.has(renamed.toLowerCase()); n++) renamed = `${stem}-${n}.png`
  usedUris.add(renamed.toLowerCase())
  texture.setURI(renamed)
}
