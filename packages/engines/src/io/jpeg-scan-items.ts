// What a progressive scan codes, recorded before its Huffman tables exist.
import { grown } from './jpeg-scan.ts'

/** The slot of bits that follow no code (the refinement scans' correction and sign bits): its codes are 0 bits long. */
export const RAW = 8

/**
 * A scan's output before its Huffman tables exist, recorded because each scan's tables are made
 * from its own symbol counts (as `jpegtran -optimize`, and every progressive libjpeg writes). Each
 * item is a symbol of a table (slot 0–3 DC, 4–7 AC; `codes` holds slot × 256 + symbol) with the
 * extra bits after it (`extras`: size × 65536 + bits), or raw bits in the RAW slot.
 */
export class ScanItems {
  count = 0
  codes = new Uint16Array(1 << 16)
  extras = new Uint32Array(1 << 16)

  symbol(slot: number, symbol: number, bits: number, size: number): void {
    if (this.count === this.codes.length) this.grow()
    this.codes[this.count] = (slot << 8) | symbol
    this.extras[this.count++] = (size << 16) | bits
  }

  bit(value: number): void {
    this.symbol(RAW, 0, value, 1)
  }

  /** `count` bits without a code from `bits` at `from` (one a byte), in items of up to 16. */
  bits(bits: Uint8Array, from: number, count: number): void {
    for (let at = from, end = from + count; at < end; ) {
      const n = Math.min(16, end - at)
      let word = 0
      for (let i = 0; i < n; i++) word = (word << 1) | bits[at + i]!
      this.symbol(RAW, 0, word, n)
      at += n
    }
  }

  /** Empties the list, keeping its room for the next scan. */
  clear(): void {
    this.count = 0
  }

  private grow(): void {
    const size = this.codes.length * 2
    this.codes = grown(this.codes, new Uint16Array(size))
    this.extras = grown(this.extras, new Uint32Array(size))
  }
}

/** Bits needed for a positive value: its SSSS category (F.1.2.1). */
export function bitLength(value: number): number {
  return 32 - Math.clz32(value)
}
