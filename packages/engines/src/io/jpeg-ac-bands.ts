import type { CoefficientPlane } from './jpeg-coefficients.ts'
import { bitLength, type ScanItems } from './jpeg-scan-items.ts'

/** An AC scan's spectral band and bit positions (T.81 G.1.1): coefficients ss–se, bits from al up, or bit al alone after ah. */
export interface AcBand {
  ss: number
  se: number
  ah: number
  al: number
}

/** Correction bits held back for an end-of-band run are flushed before they pass this many (libjpeg's MAX_CORR_BITS). */
const MAX_CORRECTION_BITS = 1000

/** The AC table's slot in ScanItems (AC table 0: an AC scan codes one component). */
const AC = 4

/**
 * Records an AC scan of one component over its own blocks (G.1.2.2, G.1.2.3), with end-of-band
 * runs across blocks: a first scan codes each coefficient shifted right by Al; a refinement, the sign
 * of each coefficient that becomes nonzero at bit Al, and bit Al of each already nonzero one (its
 * correction bits go after the next code, or with the run of bands that ends it). `lastNonzero`
 * holds each block's last nonzero coefficient: past it all is zeros, and most blocks end early.
 */
export function codeAcScan(plane: CoefficientPlane, lastNonzero: Uint8Array, band: AcBand, items: ScanItems): void {
  const coder = new AcBandCoder(plane.coefficients, band, items)
  for (let row = 0; row < plane.own.rows; row++) {
    for (let column = 0; column < plane.own.columns; column++) {
      const block = row * plane.padded.columns + column
      const last = Math.min(band.se, lastNonzero[block]!)
      if (band.ah === 0) coder.first(block * 64, last)
      else coder.refine(block * 64, last)
    }
  }
  coder.endRun()
}

/** Each block's last nonzero coefficient, in zigzag order (0 where only the DC is). */
export function lastNonzeroOf(plane: CoefficientPlane): Uint8Array {
  const coefficients = plane.coefficients
  const out = new Uint8Array(coefficients.length / 64)
  for (let block = 0; block < out.length; block++) {
    let k = 63
    while (k > 0 && coefficients[block * 64 + k] === 0) k--
    out[block] = k
  }
  return out
}

/** One AC scan's coding state: the end-of-band run (blocks, and the correction bits that go with it). */
class AcBandCoder {
  private run = 0
  private held = 0
  private readonly corrections = new Uint8Array(MAX_CORRECTION_BITS + 64)
  private readonly magnitudes = new Int32Array(64)

  constructor(
    private readonly coefficients: Int16Array,
    private readonly band: AcBand,
    private readonly items: ScanItems,
  ) {}

  /** Codes the run (its EOBn symbol, then the bits it held), if there is one. */
  endRun(): void {
    if (this.run === 0) return
    const size = bitLength(this.run) - 1
    this.items.symbol(AC, size << 4, this.run & ((1 << size) - 1), size)
    this.items.bits(this.corrections, 0, this.held)
    this.run = 0
    this.held = 0
  }

  /** One block's band in a first scan, its coefficients up to `last` (zeros after it). */
  first(base: number, last: number): void {
    const { coefficients, items } = this
    const { ss, se, al } = this.band
    let zeros = 0
    for (let k = ss; k <= last; k++) {
      const value = coefficients[base + k]!
      const magnitude = (value < 0 ? -value : value) >> al
      if (magnitude === 0) {
        zeros++
        continue
      }
      this.endRun()
      for (; zeros > 15; zeros -= 16) items.symbol(AC, 0xf0, 0, 0)
      const size = bitLength(magnitude)
      items.symbol(AC, (zeros << 4) | size, (value < 0 ? ~magnitude : magnitude) & ((1 << size) - 1), size)
      zeros = 0
    }
    if ((zeros > 0 || last < se) && ++this.run === 0x7fff) this.endRun()
  }

  /** One block's band in a refinement scan, as libjpeg's encode_mcu_AC_refine codes it; `last` as for first. */
  refine(base: number, last: number): void {
    const { coefficients, items, corrections, magnitudes } = this
    const { ss, se, al } = this.band
    // The last coefficient that becomes nonzero here: zero runs past it fold into the end of band.
    let lastNew = 0
    for (let k = ss; k <= last; k++) {
      const value = coefficients[base + k]!
      const magnitude = (value < 0 ? -value : value) >> al
      magnitudes[k] = magnitude
      if (magnitude === 1) lastNew = k
    }
    let from = this.held // this block's correction bits follow those the run holds
    let count = 0
    let zeros = 0
    for (let k = ss; k <= last; k++) {
      const magnitude = magnitudes[k]!
      if (magnitude === 0) {
        zeros++
        continue
      }
      for (; zeros > 15 && k <= lastNew; zeros -= 16) {
        this.endRun()
        items.symbol(AC, 0xf0, 0, 0)
        if (count > 0) items.bits(corrections, from, count)
        from = 0
        count = 0
      }
      if (magnitude > 1) {
        corrections[from + count++] = magnitude & 1
        continue
      }
      this.endRun()
      items.symbol(AC, (zeros << 4) | 1, coefficients[base + k]! < 0 ? 0 : 1, 1)
      if (count > 0) items.bits(corrections, from, count)
      from = 0
      count = 0
      zeros = 0
    }
    if (zeros > 0 || last < se || count > 0) {
      this.run++
      this.held += count
      if (this.run === 0x7fff || this.held > MAX_CORRECTION_BITS - 64 + 1) this.endRun()
    }
  }
}
