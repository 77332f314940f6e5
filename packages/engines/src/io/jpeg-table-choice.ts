import { encodeTable, type HuffmanSpec, optimalTable } from './jpeg-huffman-table.ts'
import type { ScanSymbols } from './jpeg-scan.ts'

/**
 * The smallest table for each table the scan uses (index = slot), and the share of the scan's coded
 * bits (codes and extra bits) they save over `current`, the tables it was coded with; both from one
 * count of its symbols. Undefined where a table cannot be built (see optimalTable).
 */
export function smallestTables(
  scan: ScanSymbols,
  current: (HuffmanSpec | undefined)[],
): { tables: (HuffmanSpec | undefined)[]; saving: number } | undefined {
  const counts: (Uint32Array | undefined)[] = new Array(8)
  for (let i = 0; i < scan.count; i++) {
    const slot = scan.slots[i]!
    counts[slot] ??= new Uint32Array(256)
    counts[slot][scan.symbols[i]!]!++
  }
  const tables = counts.map((f) => f && optimalTable(f))
  if (tables.some((table, slot) => counts[slot] && !table)) return undefined
  let before = 0
  let after = 0
  let extra = 0
  counts.forEach((f, slot) => {
    if (!f) return
    const now = encodeTable(current[slot]!).length
    const then = encodeTable(tables[slot]!).length
    for (let symbol = 0; symbol < 256; symbol++) {
      const n = f[symbol]!
      before += n * now[symbol]!
      after += n * then[symbol]!
      extra += n * (slot < 4 ? symbol : symbol & 15)
    }
  })
  return { tables, saving: (before - after) / (before + extra) }
}
