import type { Document } from '@gltf-transform/core'
import { expect } from 'vitest'
import { countSceneTriangles, documentBounds } from '../../packages/engines/src/geometry-stats.ts'

/**
 * Asserts an optimized model draws what its input drew: no visible triangle lost (encoders may drop
 * zero-area ones; quantization may collapse under 0.1% slivers, which may then be dropped) and
 * bounds within 1% of the extent.
 */
export function expectSameGeometry(input: Document, output: Document): void {
  const total = countSceneTriangles(output)
  const visible = countSceneTriangles(input, { visibleOnly: true })
  expect(total).toBeGreaterThanOrEqual(Math.floor(visible * 0.999))
  expect(total).toBeLessThanOrEqual(countSceneTriangles(input))
  expect(countSceneTriangles(output, { visibleOnly: true })).toBeGreaterThanOrEqual(Math.floor(visible * 0.999))
  const a = documentBounds(input)
  const b = documentBounds(output)
  const extent = Math.max(...a.max.map((v, i) => v - a.min[i]!))
  for (let i = 0; i < 3; i++) {
    expect(Math.abs(a.min[i]! - b.min[i]!)).toBeLessThan(extent * 0.01)
    expect(Math.abs(a.max[i]! - b.max[i]!)).toBeLessThan(extent * 0.01)
  }
}
