import { expect } from 'vitest'
import { encodeBasisKtx2, loadBasisEncoder } from '../../src/basis-encoder.ts'
import type { RgbaImage } from '../../src/io/tga.ts'

// DDS files built by the format's layout (Microsoft's DDS_HEADER, DDS_PIXELFORMAT and DDS_HEADER_DXT10),
// for the headers no encoder here writes: DX10 formats, cube maps, arrays, volumes, BC6H, hostile sizes.

/** What a test DDS declares; the pixel data follows the header as given. */
export interface DdsFileOptions {
  width: number
  height: number
  /** A legacy FourCC ('DXT1', 'ATI2', ...) or a D3DFMT number in the FourCC field. */
  fourCc?: string | number
  /** A DX10 header with this DXGI format (the FourCC becomes 'DX10'). */
  dxgi?: number
  /** Uncompressed legacy pixels: DDPF flags (0x40 RGB, 0x20000 luminance, 0x2 alpha, 0x1 alpha pixels), bits and RGBA masks. */
  pixelFlags?: number
  bits?: number
  masks?: [number, number, number, number]
  /** DDSCAPS2 (0x200 cube map, 0xfc00 its six faces, 0x200000 volume) and the volume's depth. */
  caps2?: number
  depth?: number
  mipMaps?: number
  /** DX10: resource dimension (3 2D, 4 3D), misc flag (0x4 cube) and array size. */
  dimension?: number
  miscFlag?: number
  arraySize?: number
}

/**
 * A DDS file: its 128-byte header (and the DX10 header's 20 bytes where `dxgi` is given), then `data`.
 *
 * @example
 * ddsFile({ width: 4, height: 4, fourCc: 'DXT1' }, oneBc1Block)
 */
export function ddsFile(options: DdsFileOptions, data: Uint8Array = new Uint8Array(0)): Uint8Array {
  const dx10 = options.dxgi !== undefined
  const header = dx10 ? 148 : 128
  const bytes = new Uint8Array(header + data.byteLength)
  const view = new DataView(bytes.buffer)
  bytes.set([0x44, 0x44, 0x53, 0x20])
  view.setUint32(4, 124, true)
  view.setUint32(8, 0x1 | 0x2 | 0x4 | 0x1000 | (options.mipMaps ? 0x20000 : 0) | (options.depth ? 0x800000 : 0), true)
  view.setUint32(12, options.height, true)
  view.setUint32(16, options.width, true)
  view.setUint32(24, options.depth ?? 0, true)
  view.setUint32(28, options.mipMaps ?? 1, true)
  view.setUint32(76, 32, true)
  const fourCc = dx10 ? 'DX10' : options.fourCc
  if (fourCc !== undefined) {
    view.setUint32(80, 0x4, true)
    if (typeof fourCc === 'number') view.setUint32(84, fourCc, true)
    else
      bytes.set(
        [...fourCc].map((c) => c.charCodeAt(0)),
        84,
      )
  } else {
    view.setUint32(80, options.pixelFlags ?? 0x40, true)
    view.setUint32(88, options.bits ?? 32, true)
    options.masks?.forEach((mask, i) => view.setUint32(92 + i * 4, mask, true))
  }
  view.setUint32(108, 0x1000 | (options.caps2 ? 0x8 : 0), true)
  view.setUint32(112, options.caps2 ?? 0, true)
  if (dx10) {
    view.setUint32(128, options.dxgi!, true)
    view.setUint32(132, options.dimension ?? 3, true)
    view.setUint32(136, options.miscFlag ?? 0, true)
    view.setUint32(140, options.arraySize ?? 1, true)
  }
  bytes.set(data, header)
  return bytes
}

/** A BC1 block of one RGB565 colour: both end points that colour, every index 0. */
export function flatBc1Block(colour565: number): number[] {
  return [colour565 & 255, colour565 >> 8, colour565 & 255, colour565 >> 8, 0, 0, 0, 0]
}

/** The top image of a DDS as Binomial's transcoder (basis_encoder.wasm's DDSFile) decodes it to RGBA32: a second, independent decoder. */
export async function basisDecoded(dds: Uint8Array): Promise<RgbaImage> {
  const basis = (await loadBasisEncoder()) as unknown as BasisTranscoder
  const file = new basis.DDSFile(dds)
  try {
    expect(file.isValid() && file.startTranscoding()).toBeTruthy()
    const [width, height] = [file.getWidth(), file.getHeight()]
    const data = new Uint8Array(width * height * 4)
    expect(file.transcodeImage(data, 0, 0, 0, basis.transcoder_texture_format.cTFRGBA32.value, 0, -1, -1)).toBeTruthy()
    return { width, height, data }
  } finally {
    file.close()
    file.delete()
  }
}

/** The parts of the transcoder of basis_encoder.wasm these tests use (the module's typings name the encoder only). */
export interface BasisTranscoder {
  DDSFile: new (bytes: Uint8Array) => TranscodedFile
  KTX2File: new (bytes: Uint8Array) => TranscodedFile
  transcoder_texture_format: Record<'cTFRGBA32' | 'cTFBC7_RGBA', { value: number }>
}
interface TranscodedFile {
  isValid(): boolean
  startTranscoding(): boolean
  getWidth(): number
  getHeight(): number
  getImageTranscodedSizeInBytes(level: number, layer: number, face: number, format: number): number
  transcodeImage(
    out: Uint8Array,
    level: number,
    layer: number,
    face: number,
    format: number,
    alpha: number,
    c0: number,
    c1: number,
  ): boolean
  close(): void
  delete(): void
}

/**
 * An image as BC7 blocks, made by a real encoder: Binomial's (basis_encoder.wasm) UASTC, transcoded to BC7
 * by its transcoder, and the RGBA32 the same transcoder decodes the UASTC to (modes 5 and 6 for most images).
 */
export async function uastcAsBc7(image: RgbaImage): Promise<{ blocks: Uint8Array; rgba: RgbaImage }> {
  const basis = await loadBasisEncoder()
  const transcoder = basis as unknown as BasisTranscoder
  const ktx2 = new transcoder.KTX2File(
    encodeBasisKtx2(basis, image.data, image.width, image.height, { uastc: true, quality: 2, srgb: true, mipmaps: false }),
  )
  try {
    const transcode = (format: number) => {
      const out = new Uint8Array(ktx2.getImageTranscodedSizeInBytes(0, 0, 0, format))
      expect(ktx2.transcodeImage(out, 0, 0, 0, format, 0, -1, -1)).toBeTruthy()
      return out
    }
    expect(ktx2.startTranscoding()).toBeTruthy()
    const blocks = transcode(transcoder.transcoder_texture_format.cTFBC7_RGBA.value)
    return { blocks, rgba: { ...image, data: transcode(transcoder.transcoder_texture_format.cTFRGBA32.value) } }
  } finally {
    ktx2.close()
    ktx2.delete()
  }
}
