import type { Texture } from '@gltf-transform/core'

/**
 * Image formats that textures of OBJ, COLLADA, FBX, PLY and glTF 1.0 models come in, that glTF does
 * not hold, and that sharp's prebuilt libvips decodes (sharp.format: gif, tiff, and heif, which reads
 * AVIF only: no HEVC decoder ships with it, so a HEIC stays a foreign image). Told by magic number;
 * `what` names one in a note when sharp could not decode it (image-files.ts).
 */
export const SHARP_DECODED: { magic: RegExp; kind: string; what: string; mimeType: string; extension: string }[] = [
  { magic: /^GIF8/, kind: 'GIF', what: 'a GIF image', mimeType: 'image/gif', extension: 'gif' },
  { magic: /^(II\*\0|MM\0\*)/, kind: 'TIFF', what: 'a TIFF image', mimeType: 'image/tiff', extension: 'tiff' },
  // An ISO-BMFF file whose brands (major, or a compatible one: some write mif1 first) name AVIF.
  { magic: /^[\s\S]{4}ftyp[\s\S]{0,24}avi[fs]/, kind: 'AVIF', what: 'an AVIF image', mimeType: 'image/avif', extension: 'avif' },
]

/** The entry of {@link SHARP_DECODED} the bytes' magic number names; undefined for any other bytes. */
export function sharpDecodedKind(bytes: Uint8Array): (typeof SHARP_DECODED)[number] | undefined {
  const head = String.fromCharCode(...bytes.subarray(0, 32))
  return SHARP_DECODED.find(({ magic }) => magic.test(head))
}

/**
 * A GIF, TIFF or AVIF as a reader keeps it, bytes as found, for the pass after the read that
 * decodes it (decode-foreign-textures.ts): readers are synchronous where they find their images
 * (OBJ, PLY), and sharp is not. Undefined for any other bytes.
 */
export function foreignImage(bytes: Uint8Array): { bytes: Uint8Array; mimeType: string; extension: string } | undefined {
  const kind = sharpDecodedKind(bytes)
  return kind && { bytes, mimeType: kind.mimeType, extension: kind.extension }
}

/** What a reader would have said of a texture it kept as a GIF, TIFF or AVIF, told by the pass that decodes it. */
export interface ForeignTextureNote {
  /** The note when sharp kept part of it (`note`: 'is an animated GIF of 2 frames: its first frame is kept, as a PNG'). */
  partly?: (note: string) => string
  /** The note when sharp cannot decode it, and the texture is dropped. */
  dropped?: string
  /** When it is dropped: undoes what the reader did only because the texture was there (an emissive factor of 1 for it). */
  undo?: () => void
}

/**
 * The notes readers gave each such texture. Kept beside the document, as plain-material.ts keeps a
 * document's format: a reader deep in a zip names the texture as its author did (`.\SpiderTex.gif`),
 * which the document itself does not hold, and nothing of it may reach an output.
 */
const notesOf = new WeakMap<Texture, ForeignTextureNote[]>()

/**
 * Records what a reader would say of `texture`, which it keeps as a GIF, TIFF or AVIF; a texture
 * used in several places (glTF 1.0's emission beside assimp's base colour) takes a note from each.
 *
 * @example
 * noteForeignTexture(texture, { partly: (note) => `[obj] texture "a.gif" ${note}`, dropped: `[obj] ${unusableImageNote('a.gif', bytes)}` })
 */
export function noteForeignTexture(texture: Texture, note: ForeignTextureNote): Texture {
  notesOf.set(texture, [...(notesOf.get(texture) ?? []), note])
  return texture
}

/** The notes readers recorded for `texture` ({@link noteForeignTexture}); empty for one no reader named. */
export function foreignTextureNotes(texture: Texture): ForeignTextureNote[] {
  return notesOf.get(texture) ?? []
}

/** True when `texture` holds a GIF, TIFF or AVIF, kept for the pass after the read. */
export function holdsForeignImage(texture: Texture): boolean {
  const bytes = texture.getImage()
  return bytes !== null && sharpDecodedKind(bytes) !== undefined
}
