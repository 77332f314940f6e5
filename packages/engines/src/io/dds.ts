/**
 * A DDS (DirectDraw Surface) decoder: the texture format of game assets, found beside OBJ and FBX
 * files, which glTF cannot hold and neither sharp nor assimp reads. Covers the legacy header and the
 * DX10 one: BC1 (DXT1, 1-bit alpha), BC2 (DXT3), BC3 (DXT5), the premultiplied DXT2 and DXT4, BC4, BC5
 * (a normal map: blue rebuilt), BC7, and uncompressed pixels of 8 to 32 bits by their masks. Only the top
 * mip level of the first image is read: a cube map's other faces, an array's other images and a volume's
 * other slices are named in the note; mip maps are not (viewers make their own). Measured on 4096² images
 * (a 2-core machine shared with other jobs): BC1 0.2 s, BC3 0.25 s, BC7 0.6 s; 8192², the most it decodes, four times that.
 */
import { type BlockDecoder, decodeBc1, decodeBc2, decodeBc3, decodeBc4, decodeBc5 } from './bc-blocks.ts'
import { decodeBc7 } from './bc7-block.ts'
import { maskedChannel } from './bmp.ts'
import { DECODED_IMAGE_MAX_PIXELS, type RgbaImage, type UndecodedImage } from './tga.ts'

/** How the top image's pixels are stored: 4 × 4 blocks, or pixels of `bits` read through masks. */
type Pixels = BlockPixels | MaskedPixels
interface BlockPixels {
  blocks: BlockDecoder
  blockBytes: number
  premultiplied?: boolean
  normalMap?: boolean
}
interface MaskedPixels {
  bits: number
  masks: [number, number, number, number]
  grey?: boolean
}

/** What the header says of a DDS this decoder reads. */
interface DdsLayout {
  width: number
  height: number
  /** Where the top image's pixels start. */
  offset: number
  pixels: Pixels
  /** What is not kept (other faces, images, slices), as a note after the texture's name. */
  lost?: string
}

const BC1: Pixels = { blocks: decodeBc1, blockBytes: 8 }
const BC2: Pixels = { blocks: decodeBc2, blockBytes: 16 }
const BC3: Pixels = { blocks: decodeBc3, blockBytes: 16 }
const BC4: Pixels = { blocks: decodeBc4, blockBytes: 8 }
const BC5: Pixels = { blocks: decodeBc5, blockBytes: 16, normalMap: true }
const BC7: Pixels = { blocks: decodeBc7, blockBytes: 16 }

/** The legacy header's compressed formats, by FourCC. */
const FOURCC: Record<string, Pixels> = {
  DXT1: BC1,
  DXT2: { ...BC2, premultiplied: true },
  DXT3: BC2,
  DXT4: { ...BC3, premultiplied: true },
  DXT5: BC3,
  ATI1: BC4,
  BC4U: BC4,
  ATI2: BC5,
  BC5U: BC5,
}

const masked = (bits: number, r: number, g: number, b: number, a: number, grey = false): Pixels => ({ bits, masks: [r, g, b, a], grey })

/** The DX10 header's DXGI formats this decoder reads (typeless, UNORM and SRGB alike: sRGB is glTF's colour space too). */
const DXGI: Record<number, Pixels> = {
  ...Object.fromEntries([27, 28, 29].map((f) => [f, masked(32, 0xff, 0xff00, 0xff0000, 0xff000000)])),
  ...Object.fromEntries([87, 90, 91].map((f) => [f, masked(32, 0xff0000, 0xff00, 0xff, 0xff000000)])),
  ...Object.fromEntries([88, 92, 93].map((f) => [f, masked(32, 0xff0000, 0xff00, 0xff, 0)])),
  24: masked(32, 0x3ff, 0xffc00, 0x3ff00000, 0xc0000000),
  49: masked(16, 0xff, 0xff00, 0, 0),
  61: masked(8, 0xff, 0, 0, 0, true),
  65: masked(8, 0, 0, 0, 0xff),
  85: masked(16, 0xf800, 0x7e0, 0x1f, 0),
  86: masked(16, 0x7c00, 0x3e0, 0x1f, 0x8000),
  115: masked(16, 0xf00, 0xf0, 0xf, 0xf000),
  ...Object.fromEntries([70, 71, 72].map((f) => [f, BC1])),
  ...Object.fromEntries([73, 74, 75].map((f) => [f, BC2])),
  ...Object.fromEntries([76, 77, 78].map((f) => [f, BC3])),
  ...Object.fromEntries([79, 80].map((f) => [f, BC4])),
  ...Object.fromEntries([82, 83].map((f) => [f, BC5])),
  ...Object.fromEntries([97, 98, 99].map((f) => [f, BC7])),
}

/** Formats named in the note of a DDS Mos does not decode: HDR (floating-point and BC6H) and signed ones. */
const DXGI_HDR = new Set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 16, 26, 34, 41, 54, 67])
const DXGI_SIGNED = new Set([13, 31, 32, 37, 38, 51, 52, 58, 59, 63, 64, 81, 84])
/** D3DFMT codes of the legacy header's FourCC field: 16-bit floats (111–113) and 32-bit floats (114–116). */
const D3DFMT_FLOAT = new Set([111, 112, 113, 114, 115, 116])

/** Flags of the pixel format (DDS_PIXELFORMAT.dwFlags). */
const DDPF_ALPHAPIXELS = 0x1
const DDPF_ALPHA = 0x2
const DDPF_FOURCC = 0x4
const DDPF_RGB = 0x40
const DDPF_YUV = 0x200
const DDPF_LUMINANCE = 0x20000
const DDPF_BUMPDUDV = 0x80000

/**
 * Decodes a DDS file's top image, or returns undefined when the bytes are not a DDS this decoder
 * reads ({@link undecodedDds} says why). `note` tells what was not kept or was rebuilt, after the texture's name.
 *
 * @example
 * decodeDds(cubeMapBytes) // { width: 256, height: 256, data, note: 'is a DDS cube map of 6 faces: its first face (+X) is kept, as a PNG' }
 */
export function decodeDds(bytes: Uint8Array): (RgbaImage & { note?: string }) | undefined {
  const layout = readDds(bytes)
  if (!layout || 'what' in layout) return undefined
  const { width, height, offset, pixels } = layout
  const image = 'blocks' in pixels ? decodeBlocks(bytes, offset, width, height, pixels) : decodeMasked(bytes, offset, width, height, pixels)
  const notes = [
    'normalMap' in pixels && pixels.normalMap
      ? 'is a two-channel (BC5) normal map: kept as a PNG, its blue channel rebuilt as sqrt(1 − x² − y²)'
      : undefined,
    layout.lost,
  ].filter((note) => note !== undefined)
  return notes.length > 0 ? { ...image, note: notes.join('; it ') } : image
}

/**
 * What a DDS that {@link decodeDds} does not decode is, for its note: its format where Mos does not
 * convert it (BC6H and floating-point pixels are HDR), or damaged (cut short, over 8192 × 8192 pixels).
 * Undefined for bytes that are not a DDS, or one that decodes.
 *
 * @example
 * undecodedDds(bc6hBytes) // { what: 'a DDS image in BC6H (HDR)', damaged: false }
 */
export function undecodedDds(bytes: Uint8Array): UndecodedImage | undefined {
  const layout = readDds(bytes)
  return layout && 'what' in layout ? layout : undefined
}

/** The header of a DDS: its layout, or why it is not decoded; undefined when the bytes are not a DDS. */
function readDds(bytes: Uint8Array): DdsLayout | UndecodedImage | undefined {
  if (bytes.byteLength < 4 || String.fromCharCode(...bytes.subarray(0, 4)) !== 'DDS ') return undefined
  const damaged = { what: 'a DDS image', damaged: true }
  if (bytes.byteLength < 128) return damaged
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const height = view.getUint32(12, true)
  const width = view.getUint32(16, true)
  const fourCc = String.fromCharCode(...bytes.subarray(84, 88))
  const dx10 = (view.getUint32(80, true) & DDPF_FOURCC) !== 0 && fourCc === 'DX10'
  if (dx10 && bytes.byteLength < 148) return damaged
  const pixels = dx10 ? dxgiPixels(view.getUint32(128, true)) : legacyPixels(view)
  if ('what' in pixels) return pixels
  if (width === 0 || height === 0 || width * height > DECODED_IMAGE_MAX_PIXELS) return damaged
  const offset = dx10 ? 148 : 128
  const size =
    'blocks' in pixels ? Math.ceil(width / 4) * Math.ceil(height / 4) * pixels.blockBytes : Math.ceil((width * pixels.bits) / 8) * height
  if (offset + size > bytes.byteLength) return damaged
  const lost = dx10 ? dx10Lost(view) : legacyLost(view)
  return { width, height, offset, pixels, ...(lost ? { lost } : {}) }
}

/** The pixels of a legacy header's pixel format, or what it is where Mos does not decode it. */
function legacyPixels(view: DataView): Pixels | UndecodedImage {
  const flags = view.getUint32(80, true)
  const fourCc = view.getUint32(84, true)
  const name = String.fromCharCode(view.getUint8(84), view.getUint8(85), view.getUint8(86), view.getUint8(87))
  const unusable = (how: string) => ({ what: `a DDS image ${how}`, damaged: false })
  if (flags & DDPF_FOURCC) {
    const pixels = FOURCC[name]
    if (pixels) return pixels
    if (name === 'BC4S' || name === 'BC5S') return unusable('of signed (SNORM) channels')
    if (D3DFMT_FLOAT.has(fourCc)) return unusable('of floating-point pixels (HDR)')
    return unusable(/^[\x20-\x7e]{4}$/.test(name) ? `in the format "${name}"` : `in the Direct3D format ${fourCc}`)
  }
  if (flags & (DDPF_YUV | DDPF_BUMPDUDV)) return unusable(flags & DDPF_YUV ? 'in YUV' : 'of signed (bump map) channels')
  const bits = view.getUint32(88, true)
  if (![8, 16, 24, 32].includes(bits) || !(flags & (DDPF_RGB | DDPF_LUMINANCE | DDPF_ALPHA)))
    return unusable(`of ${bits}-bit pixels of no format Mos reads`)
  const alpha = flags & (DDPF_ALPHAPIXELS | DDPF_ALPHA) ? view.getUint32(104, true) : 0
  if (flags & DDPF_RGB) return masked(bits, view.getUint32(92, true), view.getUint32(96, true), view.getUint32(100, true), alpha)
  return masked(bits, flags & DDPF_LUMINANCE ? view.getUint32(92, true) : 0, 0, 0, alpha, (flags & DDPF_LUMINANCE) !== 0)
}

/** The pixels of a DX10 header's DXGI format, or what it is where Mos does not decode it. */
function dxgiPixels(format: number): Pixels | UndecodedImage {
  const pixels = DXGI[format]
  if (pixels) return pixels
  const how =
    format >= 94 && format <= 96
      ? 'in BC6H (HDR)'
      : DXGI_HDR.has(format)
        ? 'of floating-point pixels (HDR)'
        : DXGI_SIGNED.has(format)
          ? 'of signed (SNORM) channels'
          : `in DXGI format ${format}`
  return { what: `a DDS image ${how}`, damaged: false }
}

/** What a legacy header's cube map or volume holds beyond its first image, in words. */
function legacyLost(view: DataView): string | undefined {
  const caps2 = view.getUint32(112, true)
  if (caps2 & 0x200) {
    let faces = 0
    for (let bit = 0x400; bit <= 0x8000; bit <<= 1) if (caps2 & bit) faces++
    return faces > 1 ? cubeLost(faces) : undefined
  }
  const depth = view.getUint32(24, true)
  return caps2 & 0x200000 && depth > 1 ? `is a DDS volume texture of ${depth} slices: its first slice is kept, as a PNG` : undefined
}

/** What a DX10 header's cube map, array or volume holds beyond its first image, in words. */
function dx10Lost(view: DataView): string | undefined {
  const dimension = view.getUint32(132, true)
  const cube = (view.getUint32(136, true) & 0x4) !== 0
  const count = Math.max(1, view.getUint32(140, true))
  const depth = view.getUint32(24, true)
  if (dimension === 4 && depth > 1) return `is a DDS volume texture of ${depth} slices: its first slice is kept, as a PNG`
  if (cube) return cubeLost(count * 6)
  return count > 1 ? `is a DDS texture array of ${count} images: its first image is kept, as a PNG` : undefined
}

const cubeLost = (faces: number) => `is a DDS cube map of ${faces} faces: its first face (+X) is kept, as a PNG`

/** The top image of 4 × 4 blocks, row of blocks by row; blocks over the right and bottom edges are cut to the image. */
function decodeBlocks(bytes: Uint8Array, offset: number, width: number, height: number, pixels: BlockPixels): RgbaImage {
  const data = new Uint8Array(width * height * 4)
  const block = new Uint8Array(64)
  let at = offset
  for (let top = 0; top < height; top += 4) {
    for (let left = 0; left < width; left += 4, at += pixels.blockBytes) {
      pixels.blocks(bytes, at, block)
      const across = Math.min(4, width - left) * 4
      for (let y = 0; y < 4 && top + y < height; y++) {
        const o = ((top + y) * width + left) * 4
        for (let i = 0; i < across; i++) data[o + i] = block[y * 16 + i]!
      }
    }
  }
  if (pixels.premultiplied) unpremultiply(data)
  return { width, height, data }
}

/** DXT2 and DXT4 store colour multiplied by alpha; PNG's is straight. A transparent pixel's colour is lost either way. */
function unpremultiply(data: Uint8Array): void {
  for (let o = 0; o < data.length; o += 4) {
    const alpha = data[o + 3]!
    if (alpha === 0 || alpha === 255) continue
    for (let c = 0; c < 3; c++) data[o + c] = Math.min(255, Math.round((data[o + c]! * 255) / alpha))
  }
}

/** Uncompressed pixels of 8, 16, 24 or 32 bits, little-endian, rows unpadded, each channel by its mask (no alpha mask: opaque). */
function decodeMasked(bytes: Uint8Array, offset: number, width: number, height: number, pixels: MaskedPixels): RgbaImage {
  const data = new Uint8Array(width * height * 4)
  const size = pixels.bits / 8
  const [red, green, blue, alpha] = pixels.masks
  for (let i = 0, at = offset; i < width * height; i++, at += size) {
    let value = bytes[at]!
    for (let k = 1; k < size; k++) value |= bytes[at + k]! << (8 * k)
    value >>>= 0
    const o = i * 4
    data[o] = maskedChannel(value, red)
    data[o + 1] = pixels.grey ? data[o]! : maskedChannel(value, green)
    data[o + 2] = pixels.grey ? data[o]! : maskedChannel(value, blue)
    data[o + 3] = alpha ? maskedChannel(value, alpha) : 255
  }
  return { width, height, data }
}
