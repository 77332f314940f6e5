import { describe, expect, it } from 'vitest'
import { BASIS_MAX_SOURCE_PIXELS } from '../src/basis-encoder.ts'
import { ktx2Size } from '../src/ops/ktx2-size.ts'

describe('ktx2Size', () => {
  it('keeps sides that are multiples of 4 and fit the encoder', () => {
    expect(ktx2Size(1024, 512)).toEqual({ width: 1024, height: 512, reasons: [] })
  })

  it('rounds each side up to a multiple of 4, at least 4', () => {
    expect(ktx2Size(250, 130)).toMatchObject({ width: 252, height: 132, reasons: [expect.stringContaining('multiples of 4')] })
    expect(ktx2Size(2, 1)).toMatchObject({ width: 4, height: 4 })
  })

  it('halves an image over the encoder cap, then rounds: the result always fits', () => {
    expect(ktx2Size(4096, 4096)).toEqual({ width: 2048, height: 2048, reasons: [expect.stringContaining('12 Mi pixels')] })
    const size = ktx2Size(8190, 2047)
    expect(size).toMatchObject({ width: 4096, height: 1024 })
    expect(size.reasons).toHaveLength(2)
    // Just under the cap before rounding, over it after: halved, not written over the cap.
    expect(4093 * 3073).toBeLessThanOrEqual(BASIS_MAX_SOURCE_PIXELS)
    expect(4096 * 3076).toBeGreaterThan(BASIS_MAX_SOURCE_PIXELS)
    expect(ktx2Size(4093, 3073)).toMatchObject({ width: 2048, height: 1540 })
  })
})
