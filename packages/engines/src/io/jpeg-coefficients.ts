import { isJpegFrameHeader, jpegSegments } from './image-header.ts'
import { blockGrid, type Frame, type FrameScan, readFrame, readTables, scanLayout } from './jpeg-frame.ts'
import { decodeTable, type HuffmanSpec } from './jpeg-huffman-table.ts'
import { decodeScan, type ScanSymbols } from './jpeg-scan.ts'

/** One component's quantized DCT coefficients: 64 a block in zigzag order, blocks row by row over `padded`. */
export interface CoefficientPlane {
  /** The blocks its samples fill: what a scan of this component alone codes. */
  own: { columns: number; rows: number }
  /** To whole MCUs: what a scan of several components codes. */
  padded: { columns: number; rows: number }
  coefficients: Int16Array
}

/** A sequential JPEG as its coefficients and the segments a re-coded file carries over. */
export interface JpegCoefficients {
  frame: Frame
  /** The frame header segment, marker included. */
  frameHeader: Uint8Array
  /** Every segment before the first scan but the frame header, the Huffman tables and the restart interval, in order (APPn, COM, DQT). */
  kept: Uint8Array[]
  planes: CoefficientPlane[]
  /** From the EOI marker to the end of the file (trailing bytes included). */
  tail: Uint8Array
}

/**
 * The most coefficients read (2 bytes each, held whole): 128 MB, a 4096² image in any sampling of
 * one to three components. The frame header gives the size before any scan is read, so a header
 * claiming 65 535² pixels is refused before anything is allocated.
 */
export const MAX_COEFFICIENTS = 64 * 1024 * 1024

/** The largest DC coefficient an 8-bit JPEG holds (T.81 F.1.2.1: categories up to 11; AC sizes go up to 10). */
const DC_LIMIT = 2047

/**
 * Decodes a baseline or extended sequential, Huffman-coded 8-bit JPEG to its coefficients (no
 * inverse DCT: what a lossless re-coder keeps); undefined for anything else (progressive, lossless,
 * arithmetic-coded, 12-bit), for more than `maxCoefficients`, a scan that does not decode as a
 * well-formed one, a coefficient out of 8-bit range, a component coded by two scans, or a segment
 * other than tables between scans (a quantization table redefined there), which this reader leaves
 * alone rather than guess which decoder's reading a re-coded file should keep.
 */
export function readJpegCoefficients(bytes: Uint8Array, maxCoefficients = MAX_COEFFICIENTS): JpegCoefficients | undefined {
  if (bytes[0] !== 0xff || bytes[1] !== 0xd8) return undefined
  const specs: (HuffmanSpec | undefined)[] = new Array(8)
  const kept: Uint8Array[] = []
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let restartInterval = 0
  let image: Omit<JpegCoefficients, 'kept' | 'tail'> | undefined
  const coded = new Set<number>()
  let scans = 0
  let from = 2
  for (;;) {
    // The EOI as the file's last two bytes, which the segment walk (4 bytes at least) does not reach.
    if (from === bytes.byteLength - 2 && bytes[from] === 0xff && bytes[from + 1] === 0xd9)
      return image && scans > 0 ? { ...image, kept, tail: bytes.subarray(from) } : undefined
    let scan: { layout: FrameScan; dataStart: number } | undefined
    for (const { marker, offset, length } of jpegSegments(bytes, from)) {
      if (marker === 0xd9) return image && scans > 0 ? { ...image, kept, tail: bytes.subarray(offset) } : undefined
      const end = offset + 2 + length
      if (end > bytes.byteLength || length < 2) return undefined
      if (marker === 0xc4) {
        if (!readTables(bytes, offset + 4, end, specs)) return undefined
      } else if (isJpegFrameHeader(marker)) {
        // SOF0 and SOF1 with 8-bit samples; one frame header.
        if (image || (marker !== 0xc0 && marker !== 0xc1) || bytes[offset + 4] !== 8) return undefined
        const frame = readFrame(bytes, view, offset)
        if (!frame || coefficientCount(frame) > maxCoefficients) return undefined
        image = { frame, frameHeader: bytes.slice(offset, end), planes: emptyPlanes(frame) }
      } else if (marker === 0xdd) {
        restartInterval = view.getUint16(offset + 4)
      } else if (marker === 0xda) {
        const layout = image && scanLayout(bytes, offset, image.frame, restartInterval)
        if (!layout || layout.frameComponents.some((c) => coded.has(c))) return undefined
        for (const c of layout.frameComponents) coded.add(c)
        scan = { layout, dataStart: end }
        break
      } else if ((marker >= 0xe0 && marker <= 0xef) || marker === 0xfe || marker === 0xdb) {
        if (scans > 0) return undefined
        kept.push(bytes.slice(offset, end))
      } else return undefined // DNL, DAC, or a marker out of place
    }
    if (!scan || !image) return undefined // the segments ran out before the EOI
    const symbols = decodeScan(
      bytes,
      scan.dataStart,
      scan.layout,
      specs.map((spec) => spec && decodeTable(spec)),
    )
    if (!symbols || !placeScan(symbols, scan.layout, image.frame, image.planes)) return undefined
    scans++
    from = symbols.end
  }
}

/** The coefficients of every component's padded blocks. */
function coefficientCount(frame: Frame): number {
  return frame.components.reduce((sum, _, index) => {
    const { padded } = blockGrid(frame, index)
    return sum + padded.columns * padded.rows * 64
  }, 0)
}

function emptyPlanes(frame: Frame): CoefficientPlane[] {
  return frame.components.map((_, index) => {
    const { own, padded } = blockGrid(frame, index)
    return { own, padded, coefficients: new Int16Array(padded.columns * padded.rows * 64) }
  })
}

/** The value of a coefficient coded as `size` extra bits (F.2.2.1, EXTEND). */
function extend(bits: number, size: number): number {
  return size === 0 ? 0 : bits < 1 << (size - 1) ? bits - (1 << size) + 1 : bits
}

/**
 * Turns a decoded scan's symbols into the coefficients of the blocks it codes: DC values from their
 * differences (the prediction restarts at each restart marker), AC values at their zigzag places.
 * False where a value is out of 8-bit range.
 */
function placeScan(scan: ScanSymbols, layout: FrameScan, frame: Frame, planes: CoefficientPlane[]): boolean {
  const { symbols, extras } = scan
  const interleaved = layout.frameComponents.length > 1
  const { mcuColumns } = blockGrid(frame, 0)
  const predictions = new Int32Array(layout.frameComponents.length)
  let i = 0
  let restart = 0
  for (let mcu = 0; mcu < layout.mcus; mcu++) {
    if (restart < scan.restarts.length && scan.restarts[restart] === i) {
      predictions.fill(0)
      restart++
    }
    for (let c = 0; c < layout.frameComponents.length; c++) {
      const frameComponent = layout.frameComponents[c]!
      const plane = planes[frameComponent]!
      const { h, v } = frame.components[frameComponent]!
      for (let block = 0; block < layout.components[c]!.blocks; block++) {
        const column = interleaved ? (mcu % mcuColumns) * h + (block % h) : mcu % plane.own.columns
        const row = interleaved ? Math.floor(mcu / mcuColumns) * v + Math.floor(block / h) : Math.floor(mcu / plane.own.columns)
        const base = (row * plane.padded.columns + column) * 64
        const coefficients = plane.coefficients
        predictions[c]! += extend(extras[i]!, symbols[i]!)
        i++
        if (Math.abs(predictions[c]!) > DC_LIMIT) return false
        coefficients[base] = predictions[c]!
        for (let k = 1; k < 64; ) {
          const symbol = symbols[i]!
          const bits = extras[i++]!
          const size = symbol & 15
          if (size === 0) {
            if (symbol >> 4 !== 15) break // end of block
            k += 16
            continue
          }
          k += symbol >> 4
          if (size > 10) return false
          coefficients[base + k] = extend(bits, size)
          k++
        }
      }
    }
  }
  return i === scan.count
}
