/** What an image's header says, read without decoding a pixel. */
export interface ImageHeader {
  /** png, jpeg, webp, ktx2 or tga. */
  format: string
  width: number
  height: number
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
const KTX2_IDENTIFIER = [0xab, 0x4b, 0x54, 0x58, 0x20, 0x32, 0x30, 0xbb, 0x0d, 0x0a, 0x1a, 0x0a]

/**
 * Reads an image's format and pixel size from its header (PNG IHDR, JPEG SOFn, WebP VP8/VP8L/VP8X,
 * KTX2 header; TGA only when the caller says so, it has no magic number). Null when the bytes are
 * none of these or the header is cut short. Diagnose runs on every texture of a model, so decoding
 * whole images (seconds and hundreds of MB for 8k textures) is out of the question.
 *
 * ```ts
 * readImageHeader(pngBytes) // → { format: 'png', width: 512, height: 256 }
 * ```
 */
export function readImageHeader(bytes: Uint8Array, mimeType = ''): ImageHeader | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (startsWith(bytes, PNG_SIGNATURE) && bytes.byteLength >= 24) {
    return { format: 'png', width: view.getUint32(16), height: view.getUint32(20) }
  }
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return readJpeg(bytes, view)
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 4) === 'WEBP') return readWebp(bytes, view)
  if (startsWith(bytes, KTX2_IDENTIFIER) && bytes.byteLength >= 28) {
    // pixelHeight is 0 for 1D textures; report one row as a viewer would.
    return { format: 'ktx2', width: view.getUint32(20, true), height: Math.max(1, view.getUint32(24, true)) }
  }
  if (/tga|targa/i.test(mimeType) && bytes.byteLength >= 18) {
    return { format: 'tga', width: view.getUint16(12, true), height: view.getUint16(14, true) }
  }
  return null
}

function readJpeg(bytes: Uint8Array, view: DataView): ImageHeader | null {
  for (const { marker, offset } of jpegSegments(bytes)) {
    if (isJpegFrameHeader(marker)) {
      if (offset + 9 > bytes.byteLength) return null
      return { format: 'jpeg', width: view.getUint16(offset + 7), height: view.getUint16(offset + 5) }
    }
    if (marker === 0xda || marker === 0xd9) return null // scan data before any frame header
  }
  return null
}

/** SOF0–SOF15, the frame headers that carry the image's size and kind, except DHT (C4), JPG (C8) and DAC (CC). */
export function isJpegFrameHeader(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc
}

/**
 * Where a JPEG's entropy-coded data begins: just past the SOS segment that opens its first scan
 * (metadata such as EXIF, ICC profiles and thumbnails comes before it); 0 when the segments run out
 * or break off first.
 */
export function jpegScanStart(bytes: Uint8Array): number {
  for (const { marker, offset, length } of jpegSegments(bytes)) if (marker === 0xda) return offset + 2 + length
  return 0
}

/**
 * The marker segments of a JPEG from `from` (just after its SOI, or where a scan's data ended), each
 * with its marker, where it starts and its length field (0 where it has none).
 */
export function* jpegSegments(bytes: Uint8Array, from = 2): Generator<{ marker: number; offset: number; length: number }> {
  let offset = from
  while (offset + 4 <= bytes.byteLength) {
    if (bytes[offset] !== 0xff) return
    const marker = bytes[offset + 1]!
    if (marker === 0xff) {
      offset++ // fill byte
      continue
    }
    // Markers without a length field: TEM and RST0-7.
    const length = marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7) ? 0 : (bytes[offset + 2]! << 8) | bytes[offset + 3]!
    yield { marker, offset, length }
    offset += 2 + length
  }
}

function readWebp(bytes: Uint8Array, view: DataView): ImageHeader | null {
  const chunk = ascii(bytes, 12, 4)
  if (chunk === 'VP8 ' && bytes.byteLength >= 30) {
    return { format: 'webp', width: view.getUint16(26, true) & 0x3fff, height: view.getUint16(28, true) & 0x3fff }
  }
  if (chunk === 'VP8L' && bytes.byteLength >= 25) {
    const b1 = bytes[21]!
    const b2 = bytes[22]!
    const b3 = bytes[23]!
    const b4 = bytes[24]!
    return {
      format: 'webp',
      width: 1 + (((b2 & 0x3f) << 8) | b1),
      height: 1 + (((b4 & 0x0f) << 10) | (b3 << 2) | ((b2 & 0xc0) >> 6)),
    }
  }
  if (chunk === 'VP8X' && bytes.byteLength >= 30) {
    const uint24 = (at: number) => bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16)
    return { format: 'webp', width: 1 + uint24(24), height: 1 + uint24(27) }
  }
  return null
}

function startsWith(bytes: Uint8Array, prefix: number[]): boolean {
  return bytes.byteLength >= prefix.length && prefix.every((byte, i) => bytes[i] === byte)
}

function ascii(bytes: Uint8Array, offset: number, length: number): string {
  return String.fromCharCode(...bytes.subarray(offset, offset + length))
}

/**
 * The chunk types a PNG carries, in file order (each once), read by their lengths without
 * inflating anything; the walk stops at IEND or where a length runs past the bytes.
 */
export function pngChunkTypes(bytes: Uint8Array): Set<string> {
  const types = new Set<string>()
  if (!PNG_SIGNATURE.every((byte, i) => bytes[i] === byte)) return types
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  for (let at = 8; at + 8 <= bytes.byteLength; ) {
    const type = String.fromCharCode(...bytes.subarray(at + 4, at + 8))
    types.add(type)
    const next = at + 12 + view.getUint32(at)
    if (type === 'IEND' || next > bytes.byteLength) break
    at = next
  }
  return types
}
