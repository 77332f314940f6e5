import { KHR_DF_MODEL_ETC1S, KHR_DF_MODEL_UASTC, read } from 'ktx-parse'

/** The image format named by the file's first bytes, or undefined. */
export function sniffImage(bytes: Uint8Array): 'png' | 'jpeg' | 'webp' | 'ktx2' | undefined {
  const b = bytes
  if (b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47) return 'png'
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpeg'
  const ascii = (from: number, to: number) => new TextDecoder('latin1').decode(b.subarray(from, to))
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'webp'
  if (b[0] === 0xab && ascii(1, 7) === 'KTX 20') return 'ktx2'
  return undefined
}

export interface Ktx2Facts {
  width: number
  height: number
  levels: number
  /** The Basis Universal mode the data format descriptor declares. */
  mode: 'etc1s' | 'uastc' | 'other'
}

/** Parses a KTX2 container (throws when it is not one). */
export function inspectKtx2(bytes: Uint8Array): Ktx2Facts {
  const container = read(bytes)
  const model = container.dataFormatDescriptor[0]?.colorModel
  return {
    width: container.pixelWidth,
    height: container.pixelHeight,
    levels: container.levels.length,
    mode: model === KHR_DF_MODEL_ETC1S ? 'etc1s' : model === KHR_DF_MODEL_UASTC ? 'uastc' : 'other',
  }
}
