import type { CoefficientPlane, JpegCoefficients } from './jpeg-coefficients.ts'
import { blockGrid, type Frame, writeTables } from './jpeg-frame.ts'
import { encodeTable, type HuffmanSpec, optimalTable } from './jpeg-huffman-table.ts'
import { ScanWriter } from './jpeg-scan.ts'
import { type AcBand, codeAcScan, lastNonzeroOf } from './jpeg-ac-bands.ts'
import { bitLength, ScanItems } from './jpeg-scan-items.ts'

/** One scan of a progressive JPEG (T.81 G.1.1): the frame components it codes, its spectral band and its bit positions. */
interface ProgressiveScan extends AcBand {
  components: number[]
}

/**
 * libjpeg's `jpeg_simple_progression` script, which `jpegtran -progressive` writes: the DC
 * coefficients less their low bit first, then the low AC band of luma and each component's AC with
 * one or two low bits held back, then those bits. For three components (YCbCr), the chroma AC goes
 * whole before luma's upper band; for any other count, every component alike.
 */
function progressionScript(count: number): ProgressiveScan[] {
  const all = Array.from({ length: count }, (_, i) => i)
  const scan = (components: number[], ss: number, se: number, ah: number, al: number) => ({ components, ss, se, ah, al })
  if (count === 3) {
    return [
      scan(all, 0, 0, 0, 1),
      scan([0], 1, 5, 0, 2),
      scan([2], 1, 63, 0, 1),
      scan([1], 1, 63, 0, 1),
      scan([0], 6, 63, 0, 2),
      scan([0], 1, 63, 2, 1),
      scan(all, 0, 0, 1, 0),
      scan([2], 1, 63, 1, 0),
      scan([1], 1, 63, 1, 0),
      scan([0], 1, 63, 1, 0),
    ]
  }
  const each = (ss: number, se: number, ah: number, al: number) => all.map((c) => scan([c], ss, se, ah, al))
  return [
    scan(all, 0, 0, 0, 1),
    ...each(1, 5, 0, 2),
    ...each(6, 63, 0, 2),
    ...each(1, 63, 2, 1),
    scan(all, 0, 0, 1, 0),
    ...each(1, 63, 1, 0),
  ]
}

/**
 * Writes the coefficients as a progressive JPEG (SOF2) with the simple progression script, each
 * scan with the smallest Huffman tables for its symbols: the same coefficients, so it decodes to the
 * same pixels, and on photo-like textures 2–7% smaller than the best sequential coding (what
 * `jpegtran -progressive` gains). The segments carried over come first, in their order. Undefined
 * where a table cannot be made, or the components' blocks do not fit one MCU.
 *
 * ```ts
 * const image = readJpegCoefficients(jpeg)
 * const progressive = image && writeProgressiveJpeg(image)
 * ```
 */
export function writeProgressiveJpeg(image: JpegCoefficients): Uint8Array | undefined {
  // The DC scans interleave every component, and an MCU holds 10 blocks at most (B.2.3): a frame
  // whose sequential scans each coded one component may have more.
  const { components } = image.frame
  if (components.length > 1 && components.reduce((blocks, c) => blocks + c.h * c.v, 0) > 10) return undefined
  const out = new ScanWriter(1 << 16)
  out.write(Uint8Array.of(0xff, 0xd8))
  for (const segment of image.kept) out.write(segment)
  const header = image.frameHeader.slice()
  header[1] = 0xc2
  out.write(header)
  const items = new ScanItems()
  const lastNonzero: Uint8Array[] = []
  for (const scan of progressionScript(image.frame.components.length)) {
    items.clear()
    if (scan.ss === 0) codeDcScan(image, scan, items)
    else {
      const component = scan.components[0]!
      lastNonzero[component] ??= lastNonzeroOf(image.planes[component]!)
      codeAcScan(image.planes[component]!, lastNonzero[component], scan, items)
    }
    if (!writeScan(out, scan, image.frame, items)) return undefined
  }
  out.write(image.tail)
  return out.result().slice()
}

/** A scan's tables (from its counts), SOS segment and data. */
function writeScan(out: ScanWriter, scan: ProgressiveScan, frame: Frame, items: ScanItems): boolean {
  const counts = new Uint32Array(9 * 256)
  const codes = items.codes
  for (let i = 0; i < items.count; i++) counts[codes[i]!]!++
  const specs: (HuffmanSpec | undefined)[] = []
  for (let slot = 0; slot < 8; slot++) {
    const f = counts.subarray(slot * 256, slot * 256 + 256)
    if (!f.some((n) => n > 0)) continue
    specs[slot] = optimalTable(f)
    if (!specs[slot]) return false
  }
  if (specs.length > 0) writeTables(out, specs)
  const count = scan.components.length
  const length = 6 + 2 * count
  out.write(Uint8Array.of(0xff, 0xda, length >> 8, length & 0xff, count))
  // A DC scan's components use DC tables 0, 1, …; an AC scan's one component AC table 0.
  scan.components.forEach((c, i) => out.write(Uint8Array.of(frame.components[c]!.id, scan.ss === 0 ? i << 4 : 0)))
  out.write(Uint8Array.of(scan.ss, scan.se, (scan.ah << 4) | scan.al))
  const codeOf = new Uint16Array(9 * 256)
  const lengthOf = new Uint8Array(9 * 256) // the RAW slot's stay 0
  specs.forEach((spec, slot) => {
    if (!spec) return
    const table = encodeTable(spec)
    codeOf.set(table.code, slot * 256)
    lengthOf.set(table.length, slot * 256)
  })
  writeItems(out, items, codeOf, lengthOf)
  return true
}

/**
 * Codes the items with their tables' codes and lengths (index: slot × 256 + symbol; the RAW slot's
 * are 0 bits long) through the scan writer the Huffman re-coder uses (0xFF stuffed, padded before
 * the next marker).
 */
function writeItems(out: ScanWriter, items: ScanItems, codeOf: Uint16Array, lengthOf: Uint8Array): void {
  const { codes, extras } = items
  for (let i = 0; i < items.count; i++) {
    const code = codes[i]!
    const extra = extras[i]!
    out.put(codeOf[code]!, lengthOf[code]!)
    out.put(extra & 0xffff, extra >>> 16)
  }
  out.align()
}

/**
 * A DC scan (G.1.2.1): first, each block's DC shifted right by Al as a difference from the last of
 * its component; a refinement, bit Al of each. Several components go MCU by MCU over their padded
 * blocks, one alone over its own blocks.
 */
function codeDcScan(image: JpegCoefficients, scan: ProgressiveScan, items: ScanItems): void {
  const { frame, planes } = image
  const last = new Int32Array(scan.components.length)
  const codeBlock = (plane: CoefficientPlane, column: number, row: number, c: number) => {
    const dc = plane.coefficients[(row * plane.padded.columns + column) * 64]! >> scan.al
    if (scan.ah > 0) {
      items.bit(dc & 1)
      return
    }
    let difference = dc - last[c]!
    last[c] = dc
    let bits = difference
    if (difference < 0) {
      difference = -difference
      bits--
    }
    const size = bitLength(difference)
    items.symbol(c, size, bits & ((1 << size) - 1), size)
  }
  if (scan.components.length === 1) {
    const plane = planes[scan.components[0]!]!
    for (let row = 0; row < plane.own.rows; row++)
      for (let column = 0; column < plane.own.columns; column++) codeBlock(plane, column, row, 0)
    return
  }
  const { mcuColumns, mcuRows } = blockGrid(frame, 0)
  for (let my = 0; my < mcuRows; my++) {
    for (let mx = 0; mx < mcuColumns; mx++) {
      scan.components.forEach((component, c) => {
        const { h, v } = frame.components[component]!
        for (let y = 0; y < v; y++) for (let x = 0; x < h; x++) codeBlock(planes[component]!, mx * h + x, my * v + y, c)
      })
    }
  }
}
