/**
 * JPEG Huffman tables (ITU T.81 Annex C and K.2): reading a DHT's table for decoding, and the
 * smallest table for a scan's symbol counts, built as libjpeg's `jpeg_gen_optimal_table` builds it
 * (what `jpegtran -optimize` writes).
 */

/** A table as a DHT segment holds it: how many codes of each length 1–16, and the symbols in code order. */
export interface HuffmanSpec {
  counts: Uint8Array // 16 entries: codes of length 1..16
  symbols: Uint8Array
}

/** Bits looked up at once while decoding; longer codes take the canonical walk (F.2.2.3). */
export const LOOKUP_BITS = 9

/** What decoding with one table needs. */
export interface DecodeTable {
  /** Indexed by the next LOOKUP_BITS bits: (code length << 8) | symbol, or 0 for a longer code. */
  lookup: Uint16Array
  /** Largest code of each length (index 1..16), -1 where none. */
  maxCode: Int32Array
  /** Offset in `symbols` minus the first code of each length. */
  valueOffset: Int32Array
  symbols: Uint8Array
}

/** Code and length of each symbol, for encoding. */
export interface EncodeTable {
  code: Uint16Array
  length: Uint8Array
}

/** Each symbol's canonical code (Annex C): codes of one length consecutive, in the order the symbols are listed. */
function canonicalCodes(spec: HuffmanSpec): { symbol: number; code: number; length: number }[] {
  const codes = []
  let code = 0
  let at = 0
  for (let length = 1; length <= 16; length++) {
    for (let n = 0; n < spec.counts[length - 1]!; n++) codes.push({ symbol: spec.symbols[at++]!, code: code++, length })
    code <<= 1
  }
  return codes
}

/** A DHT table ready for decoding; undefined where its counts overflow the code space (a corrupt table). */
export function decodeTable(spec: HuffmanSpec): DecodeTable | undefined {
  const codes = canonicalCodes(spec)
  const lookup = new Uint16Array(1 << LOOKUP_BITS)
  const maxCode = new Int32Array(18).fill(-1)
  const valueOffset = new Int32Array(18)
  for (let i = 0; i < codes.length; i++) {
    const { code, length } = codes[i]!
    if (code >= 2 ** length) return undefined
    if (maxCode[length] === -1) valueOffset[length] = i - code
    maxCode[length] = code
    if (length <= LOOKUP_BITS) {
      const shift = LOOKUP_BITS - length
      for (let fill = 0; fill < 1 << shift; fill++) lookup[(code << shift) | fill] = (length << 8) | codes[i]!.symbol
    }
  }
  return { lookup, maxCode, valueOffset, symbols: spec.symbols }
}

/** A table's codes for encoding. */
export function encodeTable(spec: HuffmanSpec): EncodeTable {
  const code = new Uint16Array(256)
  const length = new Uint8Array(256)
  for (const c of canonicalCodes(spec)) {
    code[c.symbol] = c.code
    length[c.symbol] = c.length
  }
  return { code, length }
}

/**
 * The smallest table for these symbol counts with no code longer than 16 bits and no code of all
 * ones (K.2, as libjpeg builds it: a reserved symbol takes the all-ones code); undefined where the
 * tree grows past 32 levels, which libjpeg refuses too.
 */
export function optimalTable(frequencies: Uint32Array): HuffmanSpec | undefined {
  const freq = new Float64Array(257)
  freq.set(frequencies)
  freq[256] = 1 // the reserved code point
  const codeSize = new Int32Array(257)
  const others = new Int32Array(257).fill(-1)
  for (;;) {
    // The two least frequent symbols; among equals, the largest value (as libjpeg picks).
    let c1 = -1
    let c2 = -1
    let v1 = Infinity
    let v2 = Infinity
    for (let i = 0; i <= 256; i++) {
      const f = freq[i]!
      if (f === 0) continue
      if (f <= v1) {
        v2 = v1
        c2 = c1
        v1 = f
        c1 = i
      } else if (f <= v2) {
        v2 = f
        c2 = i
      }
    }
    if (c2 < 0) break
    freq[c1]! += freq[c2]!
    freq[c2] = 0
    codeSize[c1]!++
    while (others[c1]! >= 0) {
      c1 = others[c1]!
      codeSize[c1]!++
    }
    others[c1] = c2
    codeSize[c2]!++
    while (others[c2]! >= 0) {
      c2 = others[c2]!
      codeSize[c2]!++
    }
  }
  if (codeSize.some((size) => size > 32)) return undefined
  const symbols: number[] = []
  for (let size = 1; size <= 32; size++) for (let s = 0; s < 256; s++) if (codeSize[s] === size) symbols.push(s)
  return { counts: limitedCounts(codeSize), symbols: Uint8Array.from(symbols) }
}

/** Codes of each length 1–16 for these code sizes, longer codes moved up the tree (K.2's Adjust_BITS) and the reserved one taken out. */
function limitedCounts(codeSize: Int32Array): Uint8Array {
  const bits = new Int32Array(33)
  for (const size of codeSize) if (size > 0) bits[size]!++
  for (let i = 32; i > 16; i--) {
    while (bits[i]! > 0) {
      let j = i - 2
      while (bits[j] === 0) j--
      bits[i]! -= 2
      bits[i - 1]!++
      bits[j + 1]! += 2
      bits[j]!--
    }
  }
  // The reserved code point gives up its code, the longest.
  let longest = 16
  while (bits[longest] === 0) longest--
  bits[longest]!--
  return Uint8Array.from(bits.subarray(1, 17))
}
