import { describe, expect, it } from 'vitest'
import { type BudgetItem, solveBudget } from '../src/ops/simplify-budget.ts'

/**
 * A primitive whose triangles fall smoothly with the error allowed (half of them gone at a local
 * error of `half`), as a simplifier's do on a real mesh; the result stands at the limit it was given.
 */
function item(triangles: number, half: number, options: { scale?: number; cap?: number } = {}): BudgetItem & { calls: number } {
  const extent = 10
  const at = (local: number) => {
    const kept = Math.round(triangles / (1 + local / half))
    return { kept: new Uint32Array(kept * 3), error: local / extent }
  }
  const result = {
    triangles,
    scale: options.scale ?? 1,
    extent,
    cap: options.cap ?? 1,
    calls: 0,
    simplify(local: number) {
      result.calls++
      return at(local)
    },
    simplifyTo(target: number) {
      // The local error at which `target` indices remain, or the cap where it cannot go that far.
      const local = Math.min(result.cap, half * (triangles / (target / 3) - 1))
      return at(local)
    },
  }
  return result
}

const kept = (results: { kept: Uint32Array }[]) => results.reduce((sum, r) => sum + r.kept.length / 3, 0)

describe('one error budget over several primitives', () => {
  it('comes within 4% of the ratio at one world error: a part that is cheap to reduce gives more', () => {
    const flat = item(10_000, 0.5)
    const detailed = item(10_000, 0.01)
    const results = solveBudget([flat, detailed], 0.5)
    expect(Math.abs(kept(results) / 10_000 - 1)).toBeLessThanOrEqual(0.04)
    // The same error on both, so the flat part (half gone at 0.5) keeps far more than the detailed one.
    expect(results[0]!.error).toBeCloseTo(results[1]!.error, 10)
    expect(results[0]!.kept.length).toBeGreaterThan(3 * results[1]!.kept.length)
  })

  it('measures the error in world units: a part drawn twice as large is held to half the local error', () => {
    const small = item(10_000, 0.1)
    const large = item(10_000, 0.1, { scale: 2 })
    const [a, b] = solveBudget([small, large], 0.5)
    expect(a!.error * small.extent * small.scale).toBeCloseTo(b!.error * large.extent * large.scale, 10)
    expect(b!.kept.length).toBeGreaterThan(a!.kept.length)
  })

  it('stops every part at its cap where even that leaves more than the ratio', () => {
    const parts = [item(1_000, 1, { cap: 0.2 }), item(1_000, 1, { cap: 0.5 })]
    const results = solveBudget(parts, 0.1)
    expect(results.map((r) => r.error * 10)).toEqual([0.2, 0.5])
  })

  it('with no error allowed (simplify_error=0), holds a part drawn at no size to error 0 too, not to an error that is not a number', () => {
    // Every cap is 0, so every probe asks for error 0: 0 over a scale of 0 is no number.
    const hidden = item(1_000, 0.1, { scale: 0, cap: 0 })
    const shown = item(1_000, 0.1, { cap: 0 })
    const results = solveBudget([hidden, shown], 0.5)
    expect(results.map((r) => r.error)).toEqual([0, 0])
    expect(results.map((r) => r.kept.length / 3)).toEqual([1_000, 1_000])
  })

  it('runs a part again only where no earlier result settles the error asked', () => {
    const parts = [item(10_000, 0.5), item(10_000, 0.01), item(500, 0.2, { cap: 1e-4 })]
    solveBudget(parts, 0.5)
    // The capped part stands at its cap for every error above it: one run, however many probes.
    expect(parts[2]!.calls).toBe(1)
    expect(parts[0]!.calls).toBeGreaterThan(1)
  })
})
