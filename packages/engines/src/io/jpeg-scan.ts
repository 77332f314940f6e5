import { type DecodeTable, type EncodeTable, LOOKUP_BITS } from './jpeg-huffman-table.ts'

/**
 * A sequential Huffman-coded JPEG scan as its coded symbols (ITU T.81 F.1.2, F.2.2): each DC
 * category and AC run/size with the extra bits that follow it, in coding order. Re-coding these
 * symbols with other tables changes no coefficient, so the image decodes exactly as before.
 */
export interface ScanSymbols {
  count: number
  /** The table each symbol was coded with: 0–3 DC, 4–7 AC (4 + the AC table's number). */
  slots: Uint8Array
  symbols: Uint8Array
  /** The extra bits after each symbol, as coded (their count is the symbol's size). */
  extras: Uint16Array
  /** Symbol indices where a restart marker comes first. */
  restarts: number[]
  /** Where the scan's data ends: the marker after it, or the end of the file. */
  end: number
}

/** How a scan's MCUs are made (A.2): per component in the scan, its blocks in each MCU and its tables. */
export interface ScanLayout {
  mcus: number
  restartInterval: number
  components: { blocks: number; dc: number; ac: number }[]
}

const LOOKUP_MASK = (1 << LOOKUP_BITS) - 1

/** A scan's entropy-coded bytes without their 0xFF00 stuffing, where its restart markers were, where it ends in the file. */
interface Unstuffed {
  /** The data, then SLACK zero bytes. */
  bytes: Uint8Array
  length: number
  /** Each restart marker: the data offset it came before, and its marker (RST0–RST7). */
  markers: { at: number; marker: number }[]
  end: number
}

/**
 * Zero bytes read after the data: a damaged block can read up to 64 codes of at most 31 bits past
 * the end of its interval before the check after each block stops it.
 */
const SLACK = 256

/**
 * The scan's data from `start` to the first marker other than RST0–7 (or the file's end). Runs
 * between 0xFF bytes are copied whole: a byte-by-byte loop took 27 ms on a 1.5 MB texture.
 */
function unstuff(data: Uint8Array, start: number): Unstuffed {
  const bytes = new Uint8Array(data.byteLength - start + SLACK)
  const markers: Unstuffed['markers'] = []
  let length = 0
  let pos = start
  while (pos < data.byteLength) {
    const next = data.indexOf(0xff, pos)
    const runEnd = next < 0 ? data.byteLength : next
    bytes.set(data.subarray(pos, runEnd), length)
    length += runEnd - pos
    pos = runEnd
    if (pos >= data.byteLength) break
    const after = data[pos + 1]
    if (after === 0) bytes[length++] = 0xff
    else if (after !== undefined && after >= 0xd0 && after <= 0xd7) markers.push({ at: length, marker: after })
    else break
    pos += 2
  }
  return { bytes, length, markers, end: Math.min(pos, data.byteLength) }
}

/** Where reading is: `buffer` holds the next `bits` bits (17–24 after a top-up, so a small integer), `pos` the next byte. */
class BitReader {
  pos = 0
  buffer = 0
  bits = 0
  constructor(readonly bytes: Uint8Array) {}

  get consumed(): number {
    return this.pos * 8 - this.bits
  }

  /** Whether what is left before `limit` (a byte offset) is under a byte: the padding to it. */
  onlyPaddingBefore(limit: number): boolean {
    return this.consumed <= limit * 8 && this.consumed > limit * 8 - 8
  }

  restartAt(pos: number): void {
    this.pos = pos
    this.buffer = 0
    this.bits = 0
  }
}

/** Appends symbols, growing the arrays as they fill. */
class SymbolList implements ScanSymbols {
  count = 0
  slots: Uint8Array
  symbols: Uint8Array
  extras: Uint16Array
  restarts: number[] = []
  end = 0
  constructor(capacity: number) {
    this.slots = new Uint8Array(capacity)
    this.symbols = new Uint8Array(capacity)
    this.extras = new Uint16Array(capacity)
  }

  /** Room for `n` more. */
  reserve(n: number): void {
    if (this.count + n <= this.slots.length) return
    const size = this.slots.length * 2
    this.slots = grown(this.slots, new Uint8Array(size))
    this.symbols = grown(this.symbols, new Uint8Array(size))
    this.extras = grown(this.extras, new Uint16Array(size))
  }
}

/** `to` holding `from` at its start: a typed array grown into a larger one. */
export function grown<T extends Uint8Array | Uint16Array | Uint32Array>(from: T, to: T): T {
  to.set(from)
  return to
}

/**
 * Decodes one scan's symbols from `start` (just past its SOS segment) with the tables of `tables`
 * (index = slot); undefined where the data does not decode as a well-formed scan (a code no
 * table holds, a block past 64 coefficients, data cut short, a restart marker missing, out of
 * order or extra), so a file is re-coded only where every bit of it was understood.
 */
export function decodeScan(
  data: Uint8Array,
  start: number,
  layout: ScanLayout,
  tables: (DecodeTable | undefined)[],
): ScanSymbols | undefined {
  const components = layout.components.map((c) => ({ ...c, dcTable: tables[c.dc], acTable: tables[4 + c.ac] }))
  if (components.some((c) => !c.dcTable || !c.acTable)) return undefined
  const scan = unstuff(data, start)
  const reader = new BitReader(scan.bytes)
  // About 1.4–1.7 symbols a byte of coded data on photo-like textures; the list doubles past that.
  const out = new SymbolList(Math.max(1024, scan.length * 2))
  const intervalEnd = (interval: number) => scan.markers[interval]?.at ?? scan.length
  let interval = 0
  for (let mcu = 0; mcu < layout.mcus; mcu++) {
    if (layout.restartInterval > 0 && mcu > 0 && mcu % layout.restartInterval === 0) {
      const limit = intervalEnd(interval)
      if (!reader.onlyPaddingBefore(limit) || scan.markers[interval]?.marker !== 0xd0 + (interval % 8)) return undefined
      reader.restartAt(limit)
      out.restarts.push(out.count)
      interval++
    }
    for (const c of components) {
      for (let block = 0; block < c.blocks; block++) {
        out.reserve(64)
        if (!decodeBlock(reader, c.dcTable!, c.acTable!, c.dc, 4 + c.ac, out)) return undefined
        if (reader.consumed > intervalEnd(interval) * 8) return undefined // read into the next interval, or past the data
      }
    }
  }
  if (!reader.onlyPaddingBefore(intervalEnd(interval)) || interval !== scan.markers.length) return undefined
  out.end = scan.end
  return out
}

/**
 * Decodes one block's symbols (its DC category, then AC run/sizes to the end of block), each with
 * its extra bits, into `out` (room for 64 reserved). The reader's state is copied into locals and
 * back: read through the object's fields, the loop ran at half the speed.
 */
function decodeBlock(reader: BitReader, dc: DecodeTable, ac: DecodeTable, dcSlot: number, acSlot: number, out: SymbolList): boolean {
  const { bytes } = reader
  const { slots, symbols, extras } = out
  let { pos, buffer, bits } = reader
  let count = out.count
  // k: the coefficient the next symbol codes (0 the DC, then the AC coefficients in zigzag order).
  for (let k = 0; k < 64; ) {
    const table = k === 0 ? dc : ac
    while (bits <= 16) {
      buffer = ((buffer & 0xffff) << 8) | bytes[pos++]!
      bits += 8
    }
    let look = table.lookup[(buffer >>> (bits - LOOKUP_BITS)) & LOOKUP_MASK]!
    if (look === 0) look = longCode(table, (buffer >>> (bits - 16)) & 0xffff)
    if (look < 0) return false
    bits -= look >> 8
    const symbol = look & 0xff
    const size = k === 0 ? symbol : symbol & 15
    if (size > 15) return false
    while (bits <= 16) {
      buffer = ((buffer & 0xffff) << 8) | bytes[pos++]!
      bits += 8
    }
    bits -= size
    slots[count] = k === 0 ? dcSlot : acSlot
    symbols[count] = symbol
    extras[count++] = (buffer >>> bits) & ((1 << size) - 1)
    if (k === 0) k = 1
    else if (size !== 0) {
      k += (symbol >> 4) + 1 // a run of zeros, then this coefficient
      if (k > 64) return false
    } else if (symbol >> 4 === 15)
      k += 16 // sixteen zeros
    else break // end of block
  }
  reader.pos = pos
  reader.buffer = buffer
  reader.bits = bits
  out.count = count
  return true
}

/** A code longer than the lookup, by the canonical walk (F.2.2.3): (length << 8) | symbol, or -1 where the table has none. */
function longCode(table: DecodeTable, code16: number): number {
  for (let length = LOOKUP_BITS + 1; length <= 16; length++) {
    const code = code16 >>> (16 - length)
    if (code <= table.maxCode[length]!) return (length << 8) | table.symbols[table.valueOffset[length]! + code]!
  }
  return -1
}

/** Writes bytes into a buffer that grows, and bits into those bytes with 0xFF stuffed as the scan requires. */
export class ScanWriter {
  bytes: Uint8Array
  length = 0
  private acc = 0
  private bits = 0
  constructor(capacity: number) {
    this.bytes = new Uint8Array(capacity)
  }

  byte(value: number): void {
    if (this.length === this.bytes.length) this.room(1)
    this.bytes[this.length++] = value
  }

  write(chunk: Uint8Array): void {
    this.room(chunk.byteLength)
    this.bytes.set(chunk, this.length)
    this.length += chunk.byteLength
  }

  /** Doubles the buffer until `n` more bytes fit. */
  private room(n: number): void {
    let size = this.bytes.length
    while (this.length + n > size) size *= 2
    if (size !== this.bytes.length) this.bytes = grown(this.bytes, new Uint8Array(size))
  }

  put(value: number, size: number): void {
    this.acc = ((this.acc << size) | value) >>> 0
    this.bits += size
    while (this.bits >= 8) {
      this.bits -= 8
      const byte = (this.acc >>> this.bits) & 0xff
      this.byte(byte)
      if (byte === 0xff) this.byte(0)
    }
    this.acc &= (1 << this.bits) - 1
  }

  /** Fills the last byte with one bits, as F.1.2.3 asks before a marker. */
  align(): void {
    if (this.bits > 0) this.put((1 << (8 - this.bits)) - 1, 8 - this.bits)
  }

  result(): Uint8Array {
    return this.bytes.subarray(0, this.length)
  }
}

/** Codes the symbols with `tables` (index = slot), restart markers where they were. */
export function encodeScan(scan: ScanSymbols, tables: (EncodeTable | undefined)[], out: ScanWriter): void {
  let nextRestart = 0
  for (let i = 0; i < scan.count; i++) {
    if (nextRestart < scan.restarts.length && scan.restarts[nextRestart] === i) {
      out.align()
      out.byte(0xff)
      out.byte(0xd0 + (nextRestart++ % 8))
    }
    const table = tables[scan.slots[i]!]!
    const symbol = scan.symbols[i]!
    out.put(table.code[symbol]!, table.length[symbol]!)
    const size = scan.slots[i]! < 4 ? symbol : symbol & 15
    if (size > 0) out.put(scan.extras[i]!, size)
  }
  out.align()
}
