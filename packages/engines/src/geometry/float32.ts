/** The shortest decimal that reads back as the same float32 (at most nine significant digits). */
export function shortestFloat32(value: number): number {
  if (Number.isInteger(value) || !Number.isFinite(value)) return value
  const f = Math.fround(value)
  for (let digits = 1; digits < 9; digits++) {
    const candidate = Number(f.toPrecision(digits))
    if (Math.fround(candidate) === f) return candidate
  }
  return Number(f.toPrecision(9))
}
