/**
 * One error budget over several primitives: the error (in world units) at which their triangles
 * together come to the target, found by searching that one error rather than reducing each primitive
 * to the ratio on its own. gltfpack reaches the same by merging the scene before `-si`: its
 * simplifier then removes the cheapest edges of the merged geometry first, where a per-primitive
 * ratio makes a small, detailed part pay as much as a large, flat one.
 */

/** A primitive as the search sees it: how to simplify it, and what a triangle of it weighs. */
export interface BudgetItem {
  /** Triangles before simplifying. */
  triangles: number
  /** Its world scale (the largest of its node's axes): a local error of e shows as e × scale on screen. */
  scale: number
  /** The size its relative errors are shares of (meshoptimizer's measure of its extent). */
  extent: number
  /** The largest local error allowed (the request's limit on this primitive's extent). */
  cap: number
  /** Simplified as far as `error`, a local distance, allows. */
  simplify(error: number): Simplified
  /** Simplified on its own towards `target` indices, within its cap. */
  simplifyTo(target: number): Simplified
}

/** The triangles kept (as indices) and the error they stand at, relative to the primitive's extent. */
export interface Simplified {
  kept: Uint32Array
  error: number
}

/**
 * Searches stop once the triangles kept are this close to the target, as a share of it (the goal
 * is 5%, and each probe runs the simplifier again on every primitive a known result does not
 * settle), or once the error is known this closely, as a share of itself: where one step of the
 * error drops a whole flat part, no error lands nearer.
 */
const TOLERANCE = 0.04
const ERROR_TOLERANCE = 1e-3
const MAX_ROUNDS = 16
/**
 * Triangles kept fall by about this share of the total per unit of the error's logarithm near
 * half of them (2CylinderEngine: 0.15–0.23): the first step from the first guess, where a second
 * point to measure the slope is still missing. A step is at most a factor of e² in the error.
 */
const TYPICAL_SLOPE = 0.2
const MAX_STEP = 2
/** Results remembered per item: the last few probes', which bracket the error the search is closing in on. */
const KEPT_RESULTS = 4

interface Probe {
  error: number
  results: Simplified[]
  triangles: number
}

/**
 * Each item simplified at the one world error whose triangles together come closest to `ratio` of
 * theirs. Where even the largest error allowed leaves more, every item is as far as its cap allows
 * (the error bound stops it, as it stops gltfpack).
 */
export function solveBudget(items: BudgetItem[], ratio: number): Simplified[] {
  const target = ratio * items.reduce((sum, item) => sum + item.triangles, 0)
  const highest = Math.max(...items.map((item) => item.cap * item.scale))
  const probe = probeAt(items)
  let below: Probe | undefined // the largest error known to leave too many triangles
  let above: Probe | undefined // the smallest error known to leave too few
  let best: Probe | undefined
  let last: Probe | undefined
  let error = firstGuess(items, ratio, highest)
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const p = probe(Math.min(error, highest))
    if (!best || Math.abs(p.triangles - target) < Math.abs(best.triangles - target)) best = p
    if (Math.abs(p.triangles - target) <= target * TOLERANCE) break
    if (p.triangles > target) {
      if (p.error >= highest) break // the error bound stops it
      below = p
    } else above = p
    if (below && above) {
      if (above.error / below.error < 1 + ERROR_TOLERANCE) break
      // Regula falsi on the logarithm of the error (near the target, triangles fall about linearly
      // in it), kept inside the middle four fifths so that an uneven curve still shrinks the bracket.
      const share = Math.min(0.9, Math.max(0.1, (below.triangles - target) / (below.triangles - above.triangles)))
      error = Math.exp(Math.log(below.error) + share * (Math.log(above.error) - Math.log(below.error)))
    } else {
      // One side known: a step along the slope between the last two probes, or a typical one.
      const measured = last && last.error !== p.error ? (last.triangles - p.triangles) / Math.log(p.error / last.error) : 0
      const slope = measured > 0 ? measured : TYPICAL_SLOPE * (target / ratio)
      error = p.error * Math.exp(Math.min(MAX_STEP, Math.max(-MAX_STEP, (p.triangles - target) / slope)))
    }
    last = p
  }
  return best!.results
}

/**
 * Where the search starts: the error each item reaches when reduced to the ratio on its own, in
 * world units, at the median triangle. The budget's error lies among these (the items it takes
 * further than the ratio are those whose own error is below it).
 */
function firstGuess(items: BudgetItem[], ratio: number, highest: number): number {
  const own = items
    .map((item) => ({
      error: item.simplifyTo(Math.floor(ratio * item.triangles) * 3).error * item.extent * item.scale,
      weight: item.triangles,
    }))
    .sort((a, b) => a.error - b.error)
  const half = own.reduce((sum, o) => sum + o.weight, 0) / 2
  let seen = 0
  const median = own.find((o) => (seen += o.weight) >= half)?.error ?? 0
  // Nothing to pay for the ratio (flat parts collapse at no error): start low, where that holds.
  return median > 0 ? median : highest * 1e-6
}

/**
 * Simplifies every item at one world error (an item whose cap is below it at its cap). A result
 * stands for every error between the one it reached and the limit it was asked for: nothing the
 * simplifier could remove costs an error in between, so no probe there runs that item again (most
 * items of a scene, once the search closes in, and every capped one).
 */
function probeAt(items: BudgetItem[]): (error: number) => Probe {
  const known = items.map(() => [] as { limit: number; result: Simplified }[])
  return (error) => {
    const results = items.map((item, i) => {
      // A node scaled to nothing draws nothing: no error shows, so it may go as far as its cap.
      const limit = item.scale > 0 ? Math.min(error / item.scale, item.cap) : item.cap
      const reached = (r: Simplified) => r.error * item.extent
      let result = known[i]!.find((k) => reached(k.result) <= limit && limit <= k.limit)?.result
      if (!result) {
        known[i]!.push({ limit, result: (result = item.simplify(limit)) })
        // The search closes in on one error: older results lie outside its bracket and are let go.
        if (known[i]!.length > KEPT_RESULTS) known[i]!.shift()
      }
      return result
    })
    const triangles = results.reduce((sum, r) => sum + r.kept.length / 3, 0)
    return { error, results, triangles }
  }
}
