import { LoadingManager } from 'three'
import { describe, expect, it } from 'vitest'
import { trackLoading } from '../src/viewer/loading-tracker.ts'

describe('a tracked loading manager', () => {
  it('settles once every file started has ended, calling back for each', async () => {
    const manager = new LoadingManager()
    let items = 0
    const tracker = trackLoading(manager, () => items++)
    await tracker.settled() // nothing in flight
    manager.itemStart('model.obj')
    manager.itemStart('texture.jpg')
    let settled = false
    const waiting = tracker.settled().then(() => {
      settled = true
    })
    manager.itemEnd('model.obj')
    await Promise.resolve()
    expect(settled).toBe(false)
    manager.itemError('texture.jpg')
    manager.itemEnd('texture.jpg')
    await waiting
    expect(settled).toBe(true)
    expect(items).toBe(2)
    expect(tracker.failed).toEqual(['texture.jpg'])
  })
})
