import { describe, expect, it } from 'vitest'
import { createRandom } from '../../../test/support/random.ts'
import { IntMap } from '../src/io/mesh-builder.ts'

describe('IntMap', () => {
  it('answers what a Map answers, through growth, for runs of keys and scattered ones', () => {
    const random = createRandom(3)
    const map = new IntMap()
    const reference = new Map<number, number>()
    const keys = [
      ...Array.from({ length: 5000 }, (_, i) => i), // a run: every position in order
      ...Array.from({ length: 5000 }, () => Math.floor(random() * 2 ** 31 - 1)),
    ]
    keys.forEach((key, i) => {
      map.set(key, i)
      reference.set(key, i)
    })
    // A key set again keeps its place and takes the new value.
    map.set(7, 123)
    reference.set(7, 123)
    for (const [key, value] of reference) expect(map.get(key)).toBe(value)
    expect(map.get(2 ** 31 - 1)).toBe(reference.get(2 ** 31 - 1) ?? -1)
    for (let i = 0; i < 1000; i++) {
      const key = 10_000 + Math.floor(random() * 1000)
      expect(map.get(key)).toBe(reference.get(key) ?? -1)
    }
  })
})
