import type { Document, Texture } from '@gltf-transform/core'
import { decodeBmp } from './bmp.ts'
import { decodeDds, undecodedDds } from './dds.ts'
import { foreignImage, type ForeignTextureNote, noteForeignTexture, SHARP_DECODED } from './foreign-images.ts'
import { encodePng } from './png-encode.ts'
import { decodePsd, undecodedPsd } from './psd.ts'
import { decodeTga, type RgbaImage } from './tga.ts'
import { baseName, type ResolveFile } from './upload-files.ts'

/** The glTF image types, told from the bytes' magic numbers. */
export type GltfImageType = 'image/png' | 'image/jpeg' | 'image/webp' | 'image/ktx2'

const TYPE_EXTENSION: Record<GltfImageType, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
  'image/ktx2': 'ktx2',
}

/** The file extension written for an image type (image/jpeg → jpg). */
export function imageFileExtension(type: GltfImageType): string {
  return TYPE_EXTENSION[type]
}

/** The glTF image type of the bytes, from their magic numbers (not from a name or a declared type). */
export function sniffImage(bytes: Uint8Array): GltfImageType | undefined {
  if (bytes[0] === 0x89 && bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47) return 'image/png'
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg'
  if (bytes.byteLength > 12 && String.fromCharCode(...bytes.subarray(8, 12)) === 'WEBP') return 'image/webp'
  if (bytes.byteLength > 12 && bytes[1] === 0x4b && bytes[2] === 0x54 && bytes[3] === 0x58 && bytes[5] === 0x32) return 'image/ktx2'
  return undefined
}

/**
 * A referenced image as glTF can hold it: PNG, JPEG, WebP and KTX2 as they are, TGA, BMP, DDS and PSD
 * (common beside COLLADA, OBJ and FBX files) decoded and re-encoded as PNG, which keeps every decoded
 * pixel, with a `note` where a DDS loses faces or slices or is a rebuilt BC5 normal map; undefined for
 * anything else (a BC6H DDS, a BMP holding a JPEG, ...), which {@link unusableImageNote} names. GIF,
 * TIFF and AVIF need sharp, which is asynchronous: readers keep them as found (`foreignImage`), and
 * the pass after the read decodes them (decode-foreign-textures.ts).
 */
export function toGltfImage(bytes: Uint8Array): { bytes: Uint8Array; mimeType: GltfImageType; note?: string } | undefined {
  const mimeType = sniffImage(bytes)
  if (mimeType) return { bytes, mimeType }
  // TGA, which has no magic number, last: the others' first bytes are no TGA header.
  const decoded: (RgbaImage & { note?: string }) | undefined = decodeBmp(bytes) ?? decodeDds(bytes) ?? decodePsd(bytes) ?? decodeTga(bytes)
  if (!decoded) return undefined
  return { bytes: encodePng(decoded), mimeType: 'image/png', ...(decoded.note ? { note: decoded.note } : {}) }
}

/**
 * An image as a reader keeps it: as glTF holds it (toGltfImage, with the `note` of what a conversion
 * lost), or, a GIF, TIFF or AVIF, as found and `foreign`, for the pass after the read to decode
 * (decode-foreign-textures.ts); each with the extension its file is written with. Undefined for
 * anything else, which {@link unusableImageNote} names.
 */
export function readerImage(
  bytes: Uint8Array,
): { bytes: Uint8Array; mimeType: string; extension: string; note?: string; foreign: boolean } | undefined {
  const image = toGltfImage(bytes)
  if (image) return { ...image, extension: imageFileExtension(image.mimeType), foreign: false }
  const kept = foreignImage(bytes)
  return kept && { ...kept, foreign: true }
}

/** Why a GIF, TIFF or AVIF is dropped (sharp could not decode it after the read, decode-foreign-textures.ts, or was not given), or a DDS or PSD its decoder refused. */
const UNDECODED = 'Mos could not decode (damaged, or over 8192×8192 pixels)'

/** Image formats told by their magic numbers, for notes on the images Mos cannot carry: what each is, and why. */
const FOREIGN_IMAGES: [RegExp, string, string][] = [
  ...SHARP_DECODED.map(({ magic, what }): [RegExp, string, string] => [magic, what, UNDECODED]),
  // sharp's prebuilt libvips reads AVIF only: HEVC (HEIC) has no decoder in it.
  [/^[\s\S]{4}ftyp(heic|heix|mif1|msf1)/, 'a HEIF image', ''],
  [/^\x76\x2f\x31\x01/, 'an OpenEXR image', ''],
  [/^#\?(RADIANCE|RGBE)/, 'a Radiance HDR image', ''],
  [/^\xabKTX 11/, 'a KTX 1 image', ''],
  [/^BM/, 'a BMP of a kind Mos does not decode (holding a JPEG or PNG, OS/2 RLE24, damaged, or over 8192×8192 pixels)', ''],
]

/**
 * The task note for a texture whose file was found but cannot be carried: names the file and what
 * its bytes are, so that the author knows which file to re-save as PNG or JPEG.
 *
 * @example
 * unusableImageNote('maps/sky.dds', bc6hBytes)
 * // 'texture "maps/sky.dds" is a DDS image in BC6H (HDR), which Mos cannot convert to PNG, JPEG, WebP or KTX2; dropped'
 */
export function unusableImageNote(name: string, bytes: Uint8Array): string {
  const head = String.fromCharCode(...bytes.subarray(0, 32))
  // TGA has no magic number: its name is all there is to go by.
  const tga = /\.tga$/i.test(name)
    ? 'a TGA of a kind Mos does not decode (it reads 8-bit grey, colour-mapped, 15-, 16-, 24- and 32-bit, up to 8192×8192 pixels)'
    : undefined
  // A DDS or PSD its decoder refused: the format it does not convert (BC6H, Lab, ...), or damaged.
  const undecoded = undecodedDds(bytes) ?? undecodedPsd(bytes)
  const [, what, why] = undecoded
    ? [undefined, undecoded.what, undecoded.damaged ? UNDECODED : '']
    : (FOREIGN_IMAGES.find(([magic]) => magic.test(head)) ?? [undefined, tga, ''])
  const kind = what
    ? `${what}, which ${why || 'Mos cannot convert to PNG, JPEG, WebP or KTX2'}`
    : 'not an image Mos can decode (PNG, JPEG, WebP, KTX2, TGA, BMP, DDS, PSD, GIF, TIFF, AVIF)'
  return `texture "${name}" is ${kind}; dropped`
}

/**
 * The notes of a texture file a reader keeps as a GIF, TIFF or AVIF, as that reader names the file,
 * for the pass after the read that decodes it (decode-foreign-textures.ts).
 *
 * @example
 * foreignTextureNote('obj', '.\\SpiderTex.gif', gifBytes).partly?.('is an animated GIF of 2 frames: its first frame is kept, as a PNG')
 * // '[obj] texture ".\\SpiderTex.gif" is an animated GIF of 2 frames: its first frame is kept, as a PNG'
 */
export function foreignTextureNote(reader: string, name: string, bytes: Uint8Array): ForeignTextureNote {
  return { partly: (note) => `[${reader}] texture "${name}" ${note}`, dropped: `[${reader}] ${unusableImageNote(name, bytes)}` }
}

/** An image written as a file beside (COLLADA, OBJ) or inside (FBX) the model. */
export interface ImageFile {
  /** A clean file name, unique within the output, with the extension of the bytes' type. */
  fileName: string
  bytes: Uint8Array
}

/** Extensions an image name may carry, stripped before the real one is added. */
const IMAGE_EXTENSION = /\.(png|jpe?g|tga|webp|ktx2|bmp|gif|tiff?|dds|exr|hdr|psd)$/i

/**
 * The clean stem of an image's name or URI: the base name only (no folders of the author's disk),
 * URL escapes undone, image extensions gone (`a.jpg.jpg` → `a`), no leading dots or underscores
 * (`._a` would hide the file on macOS and Linux), only letters, digits, `_`, `-` and `.`.
 */
export function imageStem(nameOrUri: string): string {
  let stem = baseName(nameOrUri.trim())
  try {
    stem = decodeURIComponent(stem)
  } catch {
    // not URL-escaped
  }
  stem = baseName(stem)
  while (IMAGE_EXTENSION.test(stem)) stem = stem.replace(IMAGE_EXTENSION, '')
  return stem
    .replace(/[^\w.-]+/g, '_')
    .replace(/^[._-]+|[._-]+$/g, '')
    .replace(/\.{2,}/g, '.')
}

/**
 * Names the images of one output: each texture gets one file (asked again, the same), named after
 * its URI or else its name, with the extension of its bytes' type; names are unique ignoring case
 * (a second `wood.png` becomes `wood_1.png`), since zips are unpacked on case-insensitive disks too.
 *
 * @example
 * const imageFile = createImageFiles()
 * imageFile(texture) // { fileName: 'SpiderTex.jpg', bytes }
 */
export function createImageFiles(): (texture: Texture) => ImageFile {
  const files = new Map<Texture, ImageFile>()
  const used = new Set<string>()
  return (texture) => {
    let file = files.get(texture)
    if (!file) {
      const bytes = texture.getImage() ?? new Uint8Array(0)
      const type = sniffImage(bytes) ?? (texture.getMimeType() as GltfImageType)
      const extension = TYPE_EXTENSION[type] ?? ownExtension(texture)
      const uri = texture.getURI()
      const stem = imageStem(uri && !uri.startsWith('data:') ? uri : texture.getName()) || 'texture'
      let fileName = `${stem}.${extension}`
      for (let n = 1; used.has(fileName.toLowerCase()); n++) fileName = `${stem}_${n}.${extension}`
      used.add(fileName.toLowerCase())
      file = { fileName, bytes }
      files.set(texture, file)
    }
    return file
  }
}

/**
 * The extension of a texture's image that glTF does not hold, from its MIME type (`image/vnd-ms.dds`, a
 * glTF file's MSFT_texture_dds → `dds`) or else its URI's (`rock.exr`), `bin` when neither says: a
 * writer names such bytes for what they are, never `.png`. Readers' GIF, TIFF and AVIF never get here:
 * they are PNGs before anything sees the Document (decode-foreign-textures.ts).
 */
function ownExtension(texture: Texture): string {
  const subtype = /^image\/(?:x-|vnd[.-]ms[.-])?([a-z0-9]+)$/i.exec(texture.getMimeType())?.[1]
  return (subtype ?? /\.([a-z0-9]+)$/i.exec(texture.getURI())?.[1] ?? 'bin').toLowerCase()
}

/**
 * The texture of a file a model names (an .mtl's `map_*`, a PLY's `TextureFile`), made once per name; undefined (after a warning naming the file)
 * when the upload lacks the file or Mos cannot turn its format into one glTF holds.
 */
export function createTextureLoader(
  doc: Document,
  resolve: ResolveFile,
  warn: (text: string) => void,
  reader: string,
): (file: string) => Texture | undefined {
  const textures = new Map<string, Texture | undefined>()
  return (file) => {
    if (textures.has(file)) return textures.get(file)
    const found = resolve(file)
    const image = found && readerImage(found)
    if (!found) warn(`[${reader}] texture "${file}" is not in the upload; dropped`)
    else if (!image) warn(`[${reader}] ${unusableImageNote(file, found)}`)
    else if (image.note) warn(`[${reader}] texture "${file}" ${image.note}`)
    const stem = imageStem(file) || 'texture'
    const made = image
      ? doc.createTexture(stem).setImage(image.bytes).setMimeType(image.mimeType).setURI(`${stem}.${image.extension}`)
      : undefined
    // A GIF, TIFF or AVIF is decoded after the read, and named in its notes as here.
    if (made && found && image?.foreign) noteForeignTexture(made, foreignTextureNote(reader, file, found))
    textures.set(file, made)
    return made
  }
}
