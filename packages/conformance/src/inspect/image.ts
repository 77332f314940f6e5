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

/** Width and height from a PNG, JPEG or WebP header (no pixel is decoded); undefined when unreadable. */
export function imageSize(bytes: Uint8Array): { width: number; height: number } | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  try {
    switch (sniffImage(bytes)) {
      case 'png':
        return { width: view.getUint32(16), height: view.getUint32(20) }
      case 'jpeg': {
        let at = 2
        while (at + 9 < bytes.byteLength) {
          if (bytes[at] !== 0xff) return undefined
          const marker = bytes[at + 1]!
          const length = view.getUint16(at + 2)
          // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC) carry the frame size.
          if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
            return { height: view.getUint16(at + 5), width: view.getUint16(at + 7) }
          }
          at += 2 + length
        }
        return undefined
      }
      case 'webp': {
        const chunk = new TextDecoder('latin1').decode(bytes.subarray(12, 16))
        if (chunk === 'VP8 ') return { width: view.getUint16(26, true) & 0x3fff, height: view.getUint16(28, true) & 0x3fff }
        if (chunk === 'VP8L') {
          const bits = view.getUint32(21, true)
          return { width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 }
        }
        if (chunk === 'VP8X') {
          const read24 = (at: number) => bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16)
          return { width: read24(24) + 1, height: read24(27) + 1 }
        }
        return undefined
      }
      default:
        return undefined
    }
  } catch {
    return undefined
  }
}
