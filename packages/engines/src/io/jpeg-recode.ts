import { decodeTable, encodeTable, type HuffmanSpec } from './jpeg-huffman-table.ts'
import { decodeScan, encodeScan, type ScanSymbols, ScanWriter } from './jpeg-scan.ts'
import { smallestTables } from './jpeg-table-choice.ts'
import { isJpegFrameHeader, jpegSegments } from './image-header.ts'
import { type Frame, readFrame, readTables, scanLayout, writeTables } from './jpeg-frame.ts'

/**
 * Re-codes a baseline or extended sequential JPEG with the smallest Huffman tables for its own
 * symbols, as `jpegtran -optimize` does: every coefficient stays, so it decodes to the same pixels,
 * and every other segment (EXIF, ICC profile, comments) is copied as it is. Many exporters write
 * T.81's example tables (ClearCoatTest's normal map: 144 210 → 122 503 B). Answers undefined
 * where that is not smaller, or for what it leaves alone: progressive, lossless, hierarchical and
 * arithmetic-coded files, and any scan that does not decode as a well-formed one.
 *
 * ```ts
 * const smaller = recodeJpegHuffman(jpeg) ?? jpeg
 * ```
 */
export function recodeJpegHuffman(bytes: Uint8Array): Uint8Array | undefined {
  if (bytes[0] !== 0xff || bytes[1] !== 0xd8) return undefined
  const state: RecodeState = { specs: new Array(8), restartInterval: 0, copyFrom: 0 }
  const out = new ScanWriter(bytes.byteLength + 1024)
  let resumeAt = 2
  let scans = 0
  for (;;) {
    const scan = readUpToScan(bytes, resumeAt, state, out)
    if (scan === undefined) return undefined
    if (scan === null) break
    const end = recodeScan(bytes, scan, state, out)
    if (end === undefined) return undefined
    state.copyFrom = resumeAt = end
    scans++
  }
  if (scans === 0) return undefined
  out.write(bytes.subarray(state.copyFrom))
  const result = out.result()
  // A copy of just the file: the writer's buffer has room to spare, which a texture would keep alive.
  return result.byteLength < bytes.byteLength ? result.slice() : undefined
}

/** What the segments read so far set, and where the bytes copied as they are begin. */
interface RecodeState {
  /** Huffman tables as defined so far: DC at their number, AC at 4 + it. */
  specs: (HuffmanSpec | undefined)[]
  frame?: Frame
  restartInterval: number
  copyFrom: number
}

/**
 * Reads the segments from `from` up to the next scan's SOS, copying all but the Huffman tables to
 * `out` (each scan gets tables of its own); null where no scan follows (EOI, or the segments run
 * out: the rest is copied as it is, trailing bytes included), undefined for what is not re-coded.
 */
function readUpToScan(
  bytes: Uint8Array,
  from: number,
  state: RecodeState,
  out: ScanWriter,
): { at: number; headerEnd: number } | null | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  for (const { marker, offset, length } of jpegSegments(bytes, from)) {
    if (marker === 0xd9) return null
    const end = offset + 2 + length
    if (end > bytes.byteLength) return undefined
    if (marker === 0xc4) {
      out.write(bytes.subarray(state.copyFrom, offset))
      state.copyFrom = end
      if (!readTables(bytes, offset + 4, end, state.specs)) return undefined
    } else if (isJpegFrameHeader(marker)) {
      if (marker !== 0xc0 && marker !== 0xc1) return undefined // progressive, lossless, differential or arithmetic
      state.frame = readFrame(bytes, view, offset)
      if (!state.frame) return undefined
    } else if (marker === 0xdd) state.restartInterval = view.getUint16(offset + 4)
    else if (marker === 0xdc || marker === 0xcc)
      return undefined // DNL, arithmetic conditioning
    else if (marker === 0xda) return state.frame ? { at: offset, headerEnd: end } : undefined
  }
  return null
}

/**
 * Writes the scan whose SOS segment is at `scan.at` with the smallest tables for its symbols,
 * after the bytes copied so far; answers where its data ended in `bytes`, or undefined where it is
 * not re-coded (it does not decode, or too little would be saved).
 */
function recodeScan(bytes: Uint8Array, scan: { at: number; headerEnd: number }, state: RecodeState, out: ScanWriter): number | undefined {
  const layout = scanLayout(bytes, scan.at, state.frame!, state.restartInterval)
  if (!layout) return undefined
  if (!layout.components.some((c) => isGeneric(state.specs[c.dc], 12) || isGeneric(state.specs[4 + c.ac], 162))) return undefined
  const symbols = decodeScan(
    bytes,
    scan.headerEnd,
    layout,
    state.specs.map((spec) => spec && decodeTable(spec)),
  )
  const choice = symbols && smallestTables(symbols, state.specs)
  if (!symbols || !choice || choice.saving < MIN_SAVING) return undefined
  const optimal = choice.tables
  out.write(bytes.subarray(state.copyFrom, scan.at))
  writeTables(out, optimal)
  out.write(bytes.subarray(scan.at, scan.headerEnd))
  const dataStart = out.length
  encodeScan(
    symbols,
    optimal.map((spec) => spec && encodeTable(spec)),
    out,
  )
  // Read back what was written: a re-coded file must hold the very symbols it was made from.
  const written = decodeScan(
    out.result(),
    dataStart,
    layout,
    optimal.map((spec) => spec && decodeTable(spec)),
  )
  return written && sameSymbols(written, symbols) ? symbols.end : undefined
}

/**
 * Whether a table lists every symbol of its class (12 DC categories, 162 AC run/sizes of 8-bit
 * samples): T.81's example tables, or others made for no image in particular. A table made from an
 * image's counts (libjpeg's optimize_coding, sharp's default, which Mos's texture operations use)
 * lists only the symbols that occur, and is already the smallest: on the assimp corpus every JPEG
 * with something to gain has such generic tables and every one without has none, so a scan coded
 * only with tables of its own is left without decoding it (a 1.5 MB texture cost 6–30 ms to find
 * that out by decoding).
 */
function isGeneric(spec: HuffmanSpec | undefined, symbols: number): boolean {
  return spec !== undefined && spec.symbols.byteLength >= symbols
}

/** The least share of the scan's coded bits the smallest tables must save for it to be re-coded. */
const MIN_SAVING = 0.01

function sameSymbols(a: ScanSymbols, b: ScanSymbols): boolean {
  if (a.count !== b.count || a.restarts.length !== b.restarts.length) return false
  for (let i = 0; i < a.count; i++) {
    if (a.slots[i] !== b.slots[i] || a.symbols[i] !== b.symbols[i] || a.extras[i] !== b.extras[i]) return false
  }
  return a.restarts.every((at, i) => at === b.restarts[i])
}
