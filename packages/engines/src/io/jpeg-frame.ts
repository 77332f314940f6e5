import type { HuffmanSpec } from './jpeg-huffman-table.ts'
import type { ScanLayout, ScanWriter } from './jpeg-scan.ts'

// What the JPEG re-coders read from a file's marker segments (ITU T.81 B.2): the frame header, the
// Huffman tables, and how a scan's MCUs are made of the frame's components.

/** A frame's components (B.2.2): identifier and sampling factors. */
export interface Frame {
  width: number
  height: number
  components: { id: number; h: number; v: number }[]
}

/** A DHT segment's tables into `specs` (DC at their number, AC at 4 + it); false where one is malformed. */
export function readTables(bytes: Uint8Array, from: number, end: number, specs: (HuffmanSpec | undefined)[]): boolean {
  let at = from
  while (at < end) {
    const classAndId = bytes[at]!
    const tableClass = classAndId >> 4
    const id = classAndId & 15
    if (tableClass > 1 || id > 3 || at + 17 > end) return false
    const counts = bytes.slice(at + 1, at + 17)
    const total = counts.reduce((sum, n) => sum + n, 0)
    if (at + 17 + total > end || total > 256) return false
    specs[tableClass * 4 + id] = { counts, symbols: bytes.slice(at + 17, at + 17 + total) }
    at += 17 + total
  }
  return true
}

export function readFrame(bytes: Uint8Array, view: DataView, offset: number): Frame | undefined {
  const precision = bytes[offset + 4]
  const height = view.getUint16(offset + 5)
  const width = view.getUint16(offset + 7)
  const count = bytes[offset + 9]!
  // A height of 0 is given later by a DNL marker, which this re-coder leaves alone.
  if ((precision !== 8 && precision !== 12) || height === 0 || width === 0 || count === 0) return undefined
  const components = []
  for (let i = 0; i < count; i++) {
    const at = offset + 10 + 3 * i
    const h = bytes[at + 1]! >> 4
    const v = bytes[at + 1]! & 15
    if (h < 1 || h > 4 || v < 1 || v > 4) return undefined
    components.push({ id: bytes[at]!, h, v })
  }
  return { width, height, components }
}

/** A sequential scan's layout, with the frame components it codes (their index in the frame, in scan order). */
export interface FrameScan extends ScanLayout {
  frameComponents: number[]
}

/** The MCUs of the scan whose SOS segment is at `offset` (A.2.2, A.2.3); undefined for a scan that is not sequential. */
export function scanLayout(bytes: Uint8Array, offset: number, frame: Frame, restartInterval: number): FrameScan | undefined {
  const count = bytes[offset + 4]!
  const after = offset + 5 + 2 * count
  // Ss = 0, Se = 63, Ah = Al = 0: the whole block in one scan.
  if (count < 1 || count > 4 || bytes[after] !== 0 || bytes[after + 1] !== 63 || bytes[after + 2] !== 0) return undefined
  const components = []
  for (let i = 0; i < count; i++) {
    const index = frame.components.findIndex((c) => c.id === bytes[offset + 5 + 2 * i])
    const tables = bytes[offset + 6 + 2 * i]!
    if (index < 0 || tables >> 4 > 3 || (tables & 15) > 3) return undefined
    components.push({ ...frame.components[index]!, index, dc: tables >> 4, ac: tables & 15 })
  }
  const frameComponents = components.map((c) => c.index)
  if (count === 1) {
    // One component: its blocks one by one, over its own size.
    const [c] = components as [(typeof components)[0]]
    const { columns, rows } = blockGrid(frame, c.index).own
    return { mcus: columns * rows, restartInterval, frameComponents, components: [{ blocks: 1, dc: c.dc, ac: c.ac }] }
  }
  const { mcuColumns, mcuRows } = blockGrid(frame, 0)
  return {
    mcus: mcuColumns * mcuRows,
    restartInterval,
    frameComponents,
    components: components.map((c) => ({ blocks: c.h * c.v, dc: c.dc, ac: c.ac })),
  }
}

/**
 * A component's 8×8 blocks (A.2): `own`, those its samples fill, which a scan of it alone codes;
 * `padded`, to whole MCUs, which a scan of several components codes (the extra ones are discarded).
 */
export function blockGrid(
  frame: Frame,
  component: number,
): { own: { columns: number; rows: number }; padded: { columns: number; rows: number }; mcuColumns: number; mcuRows: number } {
  const hMax = Math.max(...frame.components.map((c) => c.h))
  const vMax = Math.max(...frame.components.map((c) => c.v))
  const { h, v } = frame.components[component]!
  const mcuColumns = Math.ceil(frame.width / (8 * hMax))
  const mcuRows = Math.ceil(frame.height / (8 * vMax))
  return {
    own: { columns: Math.ceil(Math.ceil((frame.width * h) / hMax) / 8), rows: Math.ceil(Math.ceil((frame.height * v) / vMax) / 8) },
    padded: { columns: mcuColumns * h, rows: mcuRows * v },
    mcuColumns,
    mcuRows,
  }
}

/** One DHT segment with the scan's tables. */
export function writeTables(out: ScanWriter, tables: (HuffmanSpec | undefined)[]): void {
  const present = tables.flatMap((spec, slot) => (spec ? [{ spec, slot }] : []))
  const length = 2 + present.reduce((sum, { spec }) => sum + 17 + spec.symbols.byteLength, 0)
  out.write(Uint8Array.of(0xff, 0xc4, length >> 8, length & 0xff))
  for (const { spec, slot } of present) {
    out.byte(((slot >> 2) << 4) | (slot & 3))
    out.write(spec.counts)
    out.write(spec.symbols)
  }
}
