/** Raster formats the texture operations read and write with sharp. */
export type ImageFormat = 'png' | 'jpeg' | 'webp'

/** What an image's header declares, read without decoding a pixel. */
export interface ImageHeader {
  format: ImageFormat
  width: number
  height: number
}

/** Standalone image uploads, by file extension, and the format each one holds. */
export const IMAGE_EXTENSION_FORMATS: Record<string, ImageFormat> = { png: 'png', jpg: 'jpeg', jpeg: 'jpeg', webp: 'webp' }

export const IMAGE_MIME_TYPES: Record<ImageFormat, string> = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' }

/** File extension written for each format. */
export const IMAGE_FILE_EXTENSIONS: Record<ImageFormat, string> = { png: 'png', jpeg: 'jpg', webp: 'webp' }

/** File extension for a texture's MIME type (image/webp → webp), or undefined for others. */
export function extensionForMimeType(mimeType: string): string | undefined {
  const format = (Object.keys(IMAGE_MIME_TYPES) as ImageFormat[]).find((f) => IMAGE_MIME_TYPES[f] === mimeType)
  if (format) return IMAGE_FILE_EXTENSIONS[format]
  return mimeType === 'image/ktx2' ? 'ktx2' : undefined
}

/** True when the upload's extension names a standalone image rather than a model. */
export function isImageExtension(extension: string): boolean {
  return extension.toLowerCase() in IMAGE_EXTENSION_FORMATS
}

/**
 * Reads the format and dimensions from a PNG, JPEG or WebP header. Returns undefined for other
 * formats and for headers too short or malformed to say; never decodes pixels, so a small file
 * declaring a huge image costs nothing here.
 */
export function readImageHeader(bytes: Uint8Array): ImageHeader | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (isPng(bytes)) {
    // The first chunk must be IHDR: width and height are its first two big-endian words.
    if (bytes.byteLength < 24 || ascii(bytes, 12, 4) !== 'IHDR') return undefined
    return { format: 'png', width: view.getUint32(16), height: view.getUint32(20) }
  }
  if (bytes.byteLength >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return readJpegHeader(bytes, view)
  if (bytes.byteLength >= 30 && ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 4) === 'WEBP') return readWebpHeader(bytes, view)
  return undefined
}

function isPng(bytes: Uint8Array): boolean {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
  return bytes.byteLength >= 8 && signature.every((b, i) => bytes[i] === b)
}

function readJpegHeader(bytes: Uint8Array, view: DataView): ImageHeader | undefined {
  // Walk the marker segments to the first start-of-frame (SOF0..SOF15 except DHT, JPG and DAC).
  let offset = 2
  while (offset + 4 <= bytes.byteLength) {
    if (bytes[offset] !== 0xff) return undefined
    const marker = bytes[offset + 1]!
    if (marker === 0xff) {
      offset++ // fill byte
      continue
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      offset += 2 // markers without a length
      continue
    }
    const length = view.getUint16(offset + 2)
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc
    if (isFrame) {
      if (offset + 9 > bytes.byteLength) return undefined
      return { format: 'jpeg', height: view.getUint16(offset + 5), width: view.getUint16(offset + 7) }
    }
    if (marker === 0xda || length < 2) return undefined // scan data before any frame header: malformed
    offset += 2 + length
  }
  return undefined
}

function readWebpHeader(bytes: Uint8Array, view: DataView): ImageHeader | undefined {
  const chunk = ascii(bytes, 12, 4)
  if (chunk === 'VP8X') {
    // 24-bit canvas width-1 and height-1 at offsets 24 and 27.
    const width = 1 + (view.getUint16(24, true) | (bytes[26]! << 16))
    const height = 1 + (view.getUint16(27, true) | (bytes[29]! << 16))
    return { format: 'webp', width, height }
  }
  if (chunk === 'VP8L') {
    if (bytes[20] !== 0x2f) return undefined
    const bits = view.getUint32(21, true)
    return { format: 'webp', width: 1 + (bits & 0x3fff), height: 1 + ((bits >>> 14) & 0x3fff) }
  }
  if (chunk === 'VP8 ') {
    // Key frame start code 9d 01 2a, then 14-bit width and height (upper 2 bits are scaling).
    if (bytes[23] !== 0x9d || bytes[24] !== 0x01 || bytes[25] !== 0x2a) return undefined
    return { format: 'webp', width: view.getUint16(26, true) & 0x3fff, height: view.getUint16(28, true) & 0x3fff }
  }
  return undefined
}

function ascii(bytes: Uint8Array, offset: number, length: number): string {
  return String.fromCharCode(...bytes.subarray(offset, offset + length))
}
