import { encodeTable, type HuffmanSpec, optimalTable } from './jpeg-huffman-table.ts'
import type { ScanSymbols } from './jpeg-scan.ts'

/** The smallest table for each table the scan uses (index = slot), or undefined where one cannot be built (see optimalTable). */
export function optimalTables(scan: ScanSymbols): (HuffmanSpec | undefined)[] | undefined {
  const counts: (Uint32Array | undefined)[] = new Array(8)
  for (let i = 0; i < scan.count; i++) {
    const slot = scan.slots[i]!
    counts[slot] ??= new Uint32Array(256)
    counts[slot][scan.symbols[i]!]!++
  }
  const tables = counts.map((f) => f && optimalTable(f))
  return tables.some((table, slot) => counts[slot] && !table) ? undefined : tables
}

/** The share of its coded bits (codes and extra bits) a scan saves with `smallest` over `current`, the tables it was coded with. */
export function savingOf(scan: ScanSymbols, current: (HuffmanSpec | undefined)[], smallest: (HuffmanSpec | undefined)[]): number {
  const now = current.map((spec) => spec && encodeTable(spec))
  const then = smallest.map((spec) => spec && encodeTable(spec))
  let before = 0
  let after = 0
  let extra = 0
  for (let i = 0; i < scan.count; i++) {
    const slot = scan.slots[i]!
    const symbol = scan.symbols[i]!
    before += now[slot]!.length[symbol]!
    after += then[slot]!.length[symbol]!
    extra += slot < 4 ? symbol : symbol & 15
  }
  return (before - after) / (before + extra)
}
