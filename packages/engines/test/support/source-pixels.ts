// Pixels read straight off an image file's bytes by the format's layout, for the uncompressed files of the
// assimp corpus: the reference Mos's own decoders (io/tga.ts, io/bmp.ts) are checked against.

/** Pixel (x, y) as RGBA of an uncompressed TGA (24- or 32-bit, rows bottom-up). */
export function tgaPixel(bytes: Uint8Array, x: number, y: number): number[] {
  const width = bytes[12]! | (bytes[13]! << 8)
  const height = bytes[14]! | (bytes[15]! << 8)
  const size = bytes[16]! / 8
  const at = 18 + bytes[0]! + ((height - 1 - y) * width + x) * size
  return [bytes[at + 2]!, bytes[at + 1]!, bytes[at]!, size === 4 ? bytes[at + 3]! : 255]
}

/** Pixel (x, y) as RGBA of an uncompressed bottom-up 8-bit BMP: its colour table entry (the table follows the info header, rows are padded to 4 bytes). */
export function bmpPixel(bytes: Uint8Array, x: number, y: number): number[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const width = view.getInt32(18, true)
  const height = view.getInt32(22, true)
  const index = bytes[view.getUint32(10, true) + (height - 1 - y) * Math.ceil(width / 4) * 4 + x]!
  const entry = 14 + view.getUint32(14, true) + index * 4
  return [bytes[entry + 2]!, bytes[entry + 1]!, bytes[entry]!, 255]
}
