import sharp from 'sharp'
import { jpegSegments } from '../../src/io/image-header.ts'
import { noise } from './noise.ts'

/** The pixels sharp (libjpeg-turbo) decodes, or undefined where it refuses the file. */
export async function pixelsOf(jpeg: Uint8Array): Promise<Buffer | undefined> {
  try {
    return await sharp(jpeg).raw().toBuffer()
  } catch {
    return undefined
  }
}

/**
 * `count` copies of the JPEG, each with one byte of its first scan's data changed (deterministic from
 * `seed`), and where: damage a re-coder must refuse, or read as libjpeg-turbo does.
 */
export function damagedScans(jpeg: Uint8Array, count: number, seed: number): { at: number; bytes: Uint8Array }[] {
  const scan = [...jpegSegments(jpeg)].find((s) => s.marker === 0xda)!
  const dataStart = scan.offset + 2 + scan.length
  const flips = noise(2 * count, seed)
  return Array.from({ length: count }, (_, i) => {
    const bytes = jpeg.slice()
    const at = dataStart + (((flips[2 * i]! << 8) | flips[2 * i + 1]!) % (jpeg.byteLength - 2 - dataStart))
    bytes[at] = flips[2 * i]! ^ 0x5a
    return { at, bytes }
  })
}

/** The frame header's marker: 0xc0 baseline, 0xc1 extended sequential, 0xc2 progressive. */
export function frameMarker(jpeg: Uint8Array): number | undefined {
  return [...jpegSegments(jpeg)].find(({ marker }) => marker >= 0xc0 && marker <= 0xc2)?.marker
}
