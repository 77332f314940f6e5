import { encodeTable, type HuffmanSpec, optimalTable } from './jpeg-huffman-table.ts'
import type { ScanSymbols } from './jpeg-scan.ts'

/** How often each symbol occurs among symbols [from, to) of the scan, per table slot; undefined for slots none uses. */
function symbolCounts(scan: ScanSymbols, from: number, to: number): (Uint32Array | undefined)[] {
  const counts: (Uint32Array | undefined)[] = new Array(8)
  for (let i = from; i < to; i++) {
    const slot = scan.slots[i]!
    counts[slot] ??= new Uint32Array(256)
    counts[slot][scan.symbols[i]!]!++
  }
  return counts
}

/** Tables for these counts, or undefined where one cannot be built (see optimalTable). */
function tablesFor(counts: (Uint32Array | undefined)[]): (HuffmanSpec | undefined)[] | undefined {
  const tables = counts.map((f) => f && optimalTable(f))
  return tables.some((table, slot) => counts[slot] && !table) ? undefined : tables
}

/** The smallest table for each table the scan uses (index = slot), or undefined where one cannot be built. */
export function optimalTables(scan: ScanSymbols): (HuffmanSpec | undefined)[] | undefined {
  return tablesFor(symbolCounts(scan, 0, scan.count))
}

/** The share of the coded bits (codes and extra bits) of symbols [from, to) that `proposed` saves over `current`. */
function codedSaving(
  scan: ScanSymbols,
  from: number,
  to: number,
  current: (HuffmanSpec | undefined)[],
  proposed: (HuffmanSpec | undefined)[],
): number {
  const now = current.map((spec) => spec && encodeTable(spec))
  const then = proposed.map((spec) => spec && encodeTable(spec))
  let before = 0
  let after = 0
  let extra = 0
  for (let i = from; i < to; i++) {
    const slot = scan.slots[i]!
    const symbol = scan.symbols[i]!
    before += now[slot]!.length[symbol]!
    after += then[slot]!.length[symbol]!
    extra += slot < 4 ? symbol : symbol & 15
  }
  return (before - after) / (before + extra)
}

/**
 * The share of its coded bits a scan saves with its own smallest tables over `current`, the tables
 * it was coded with (0 where they cannot be built): exact for a whole scan. For a sample (`end` -1)
 * the sample's own smallest tables would flatter themselves (they fit its counts); tables made from
 * its first half are measured on its second half instead, every symbol there given at least one
 * count so it has a code.
 */
export function savingOf(scan: ScanSymbols, current: (HuffmanSpec | undefined)[]): number {
  if (scan.end >= 0) {
    const smallest = optimalTables(scan)
    return smallest ? codedSaving(scan, 0, scan.count, current, smallest) : 0
  }
  const half = scan.count >> 1
  const counts = symbolCounts(scan, 0, half)
  for (let i = half; i < scan.count; i++) {
    const slot = scan.slots[i]!
    counts[slot] ??= new Uint32Array(256)
    counts[slot][scan.symbols[i]!] ||= 1
  }
  const fromFirstHalf = tablesFor(counts)
  return fromFirstHalf ? codedSaving(scan, half, scan.count, current, fromFirstHalf) : 0
}
