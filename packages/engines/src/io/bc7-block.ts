/**
 * The BC7 (BPTC) block decoder: 16 bytes for 4 × 4 RGBA pixels in one of eight modes, each with its
 * own subsets, end point precision, p-bits, channel rotation and index widths. Written from Microsoft's
 * "BC7 Format" page and the Khronos Data Format specification; the tables below are theirs.
 */
import type { BlockDecoder } from './bc-blocks.ts'

/** One mode's layout: what its bits hold, in the order they come after the mode bits. */
interface Bc7Mode {
  subsets: number
  partitionBits: number
  rotationBits: number
  selectorBits: number
  colourBits: number
  alphaBits: number
  /** 0 none, 1 one p-bit per end point, 2 one shared by both end points of a subset (mode 1). */
  pBits: 0 | 1 | 2
  indexBits: number
  /** The second index set of modes 4 and 5 (alpha, or colour where mode 4's selector bit says so). */
  index2Bits: number
}

const mode = (...v: number[]): Bc7Mode => {
  const [subsets, partitionBits, rotationBits, selectorBits, colourBits, alphaBits, pBits, indexBits, index2Bits] = v as [
    number,
    number,
    number,
    number,
    number,
    number,
    0 | 1 | 2,
    number,
    number,
  ]
  return { subsets, partitionBits, rotationBits, selectorBits, colourBits, alphaBits, pBits, indexBits, index2Bits }
}

const MODES: Bc7Mode[] = [
  mode(3, 4, 0, 0, 4, 0, 1, 3, 0),
  mode(2, 6, 0, 0, 6, 0, 2, 3, 0),
  mode(3, 6, 0, 0, 5, 0, 0, 2, 0),
  mode(2, 6, 0, 0, 7, 0, 1, 2, 0),
  mode(1, 0, 2, 1, 5, 6, 0, 2, 3),
  mode(1, 0, 2, 0, 7, 8, 0, 2, 2),
  mode(1, 0, 0, 0, 7, 7, 1, 4, 0),
  mode(2, 6, 0, 0, 5, 5, 1, 2, 0),
]

/** The 64 two-subset partitions: bit i set where pixel i (row by row) is in subset 1. */
const PARTITIONS_2 = [
  0xcccc, 0x8888, 0xeeee, 0xecc8, 0xc880, 0xfeec, 0xfec8, 0xec80, 0xc800, 0xffec, 0xfe80, 0xe800, 0xffe8, 0xff00, 0xfff0, 0xf000, 0xf710,
  0x008e, 0x7100, 0x08ce, 0x008c, 0x7310, 0x3100, 0x8cce, 0x088c, 0x3110, 0x6666, 0x366c, 0x17e8, 0x0ff0, 0x718e, 0x399c, 0xaaaa, 0xf0f0,
  0x5a5a, 0x33cc, 0x3c3c, 0x55aa, 0x9696, 0xa55a, 0x73ce, 0x13c8, 0x324c, 0x3bdc, 0x6996, 0xc33c, 0x9966, 0x0660, 0x0272, 0x04e4, 0x4e40,
  0x2720, 0xc936, 0x936c, 0x39c6, 0x639c, 0x9336, 0x9cc6, 0x817e, 0xe718, 0xccf0, 0x0fcc, 0x7744, 0xee22,
]

/** The 64 three-subset partitions: the subset of each pixel, row by row. */
const PARTITIONS_3 = [
  '0011001102212222 0001001122112221 0000200122112211 0222002200110111 0000000011221122 0011001100220022 0022002211111111 0011001122112211',
  '0000000011112222 0000111111112222 0000111122222222 0012001200120012 0112011201120112 0122012201220122 0011011211221222 0011200122002220',
  '0001001101121122 0111001120012200 0000112211221122 0022002200221111 0111011102220222 0001000122212221 0000001101220122 0000110022102210',
  '0122012200110000 0012001211222222 0110122112210110 0000011012211221 0022110211020022 0110011020022222 0011012201220011 0000200022112221',
  '0000000211221222 0222002200120011 0011001200220222 0120012001200120 0000111122220000 0120120120120120 0120201212010120 0011220011220011',
  '0011112222000011 0101010122222222 0000000021212121 0022112200221122 0022001100220011 0220122102201221 0101222222220101 0000212121212121',
  '0101010101012222 0222011102220111 0002111200021112 0000211221122112 0222011101110222 0002111211120002 0110011001102222 0000000021122112',
  '0110011022222222 0022001100110022 0022112211220022 0000000000002112 0002000100020001 0222122202221222 0101222222222222 0111201122012220',
]
  .join(' ')
  .split(' ')

/** The anchor pixel of subset 1 of each two-subset partition (its index has one bit less). */
const ANCHORS_2 = [
  15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 2, 8, 2, 2, 8, 8, 15, 2, 8, 2, 2, 8, 8, 2, 2, 15, 15, 6, 8, 2, 8, 15,
  15, 2, 8, 2, 2, 2, 15, 15, 6, 6, 2, 6, 8, 15, 15, 2, 2, 15, 15, 15, 15, 15, 2, 2, 15,
]

/** The anchor pixels of subsets 1 and 2 of each three-subset partition. */
const ANCHORS_3A = [
  3, 3, 15, 15, 8, 3, 15, 15, 8, 8, 6, 6, 6, 5, 3, 3, 3, 3, 8, 15, 3, 3, 6, 10, 5, 8, 8, 6, 8, 5, 15, 15, 8, 15, 3, 5, 6, 10, 8, 15, 15, 3,
  15, 5, 15, 15, 15, 15, 3, 15, 5, 5, 5, 8, 5, 10, 5, 10, 8, 13, 15, 12, 3, 3,
]
const ANCHORS_3B = [
  15, 8, 8, 3, 15, 15, 3, 8, 15, 15, 15, 15, 15, 15, 15, 8, 15, 8, 15, 3, 15, 8, 15, 8, 3, 15, 6, 10, 15, 15, 10, 8, 15, 3, 15, 10, 10, 8,
  9, 10, 6, 15, 8, 15, 3, 6, 6, 8, 15, 3, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 3, 15, 15, 8,
]

/** Interpolation weights (of 64) for 2-, 3- and 4-bit indices. */
const WEIGHTS: Record<number, number[]> = {
  2: [0, 21, 43, 64],
  3: [0, 9, 18, 27, 37, 46, 55, 64],
  4: [0, 4, 9, 13, 17, 21, 26, 30, 34, 38, 43, 47, 51, 55, 60, 64],
}

/** The block being decoded, with a zero byte after it so that a read of its last bits stays in range. */
const block = new Uint8Array(17)
let bit = 0

/** The next `count` bits (up to 8) of the block, least significant first. */
function read(count: number): number {
  const value = (block[bit >> 3]! | (block[(bit >> 3) + 1]! << 8)) >> (bit & 7)
  bit += count
  return value & ((1 << count) - 1)
}

/** End points as RGBA rows (up to 6 of them), widened to 8 bits. */
const ends = new Uint8Array(24)
/** End points as stored, before widening. */
const raw = new Uint16Array(24)
const subsetOf = new Uint8Array(16)
const indices = new Uint8Array(16)
const indices2 = new Uint8Array(16)

/** Reads the end points of mode `m` and widens them to 8 bits, their p-bits below their stored bits. */
function readEndPoints(m: Bc7Mode): void {
  const count = m.subsets * 2
  for (let c = 0; c < 3; c++) for (let e = 0; e < count; e++) raw[e * 4 + c] = read(m.colourBits)
  for (let e = 0; e < count; e++) raw[e * 4 + 3] = m.alphaBits ? read(m.alphaBits) : 0
  // Mode 1's two p-bits: one for each subset's pair of end points.
  const shared = m.pBits === 2 ? read(2) : 0
  for (let e = 0; e < count; e++) {
    const p = m.pBits === 1 ? read(1) : m.pBits === 2 ? (shared >> (e >> 1)) & 1 : -1
    for (let c = 0; c < 4; c++) {
      const stored = c === 3 ? m.alphaBits : m.colourBits
      if (stored === 0) {
        ends[e * 4 + c] = 255
        continue
      }
      const value = p >= 0 ? (raw[e * 4 + c]! << 1) | p : raw[e * 4 + c]!
      const bits = stored + (p >= 0 ? 1 : 0)
      const wide = value << (8 - bits)
      ends[e * 4 + c] = wide | (wide >> bits)
    }
  }
}

/** Which subset each pixel is in, and the pixels whose index is one bit shorter (the anchors: 0 and the subsets'). */
function readPartition(m: Bc7Mode, partition: number): number[] {
  if (m.subsets === 1) {
    subsetOf.fill(0)
    return [0]
  }
  if (m.subsets === 2) {
    const mask = PARTITIONS_2[partition]!
    for (let i = 0; i < 16; i++) subsetOf[i] = (mask >> i) & 1
    return [0, ANCHORS_2[partition]!]
  }
  const row = PARTITIONS_3[partition]!
  for (let i = 0; i < 16; i++) subsetOf[i] = row.charCodeAt(i) - 48
  return [0, ANCHORS_3A[partition]!, ANCHORS_3B[partition]!]
}

const interpolate = (a: number, b: number, weight: number) => (a * (64 - weight) + b * weight + 32) >> 6

/** BC7: 16 bytes, one of eight modes (the number of zero bits before the first one); a block with no mode bit is transparent black. */
export const decodeBc7: BlockDecoder = (bytes, at, out) => {
  for (let i = 0; i < 16; i++) block[i] = bytes[at + i]!
  let number = 0
  while (number < 8 && !((block[number >> 3]! >> (number & 7)) & 1)) number++
  const m = MODES[number]
  if (!m) {
    out.fill(0, 0, 64)
    return
  }
  bit = number + 1
  const partition = read(m.partitionBits)
  const rotation = read(m.rotationBits)
  const selector = read(m.selectorBits)
  readEndPoints(m)
  const anchors = readPartition(m, partition)
  for (let i = 0; i < 16; i++) indices[i] = read(m.indexBits - (anchors[subsetOf[i]!] === i ? 1 : 0))
  for (let i = 0; m.index2Bits && i < 16; i++) indices2[i] = read(m.index2Bits - (i === 0 ? 1 : 0))
  // Mode 4's selector bit swaps the roles of its two index sets: the 3-bit one then interpolates colour.
  const swapped = m.index2Bits > 0 && selector === 1
  const second = m.index2Bits > 0 && !swapped
  const colourIndex = swapped ? indices2 : indices
  const colourWeights = WEIGHTS[swapped ? m.index2Bits : m.indexBits]!
  const alphaIndex = second ? indices2 : indices
  const alphaWeights = WEIGHTS[second ? m.index2Bits : m.indexBits]!
  for (let i = 0; i < 16; i++) {
    const e = subsetOf[i]! * 8
    const w = colourWeights[colourIndex[i]!]!
    const o = i * 4
    for (let c = 0; c < 3; c++) out[o + c] = interpolate(ends[e + c]!, ends[e + 4 + c]!, w)
    out[o + 3] = interpolate(ends[e + 3]!, ends[e + 7]!, alphaWeights[alphaIndex[i]!]!)
    // Modes 4 and 5 may store one colour channel in the alpha slot: 1 red, 2 green, 3 blue.
    if (rotation) {
      const swap = out[o + rotation - 1]!
      out[o + rotation - 1] = out[o + 3]!
      out[o + 3] = swap
    }
  }
}
