import { describe, expect, it } from 'vitest'
import { formatBytes, outputPath, summaryLine } from '../../src/cli/format.ts'

describe('outputPath', () => {
  it('tags the result and takes the extension of the server output', () => {
    expect(outputPath('models/box.glb', 'box.glb', '.draco')).toBe('models/box.draco.glb')
    expect(outputPath('models/box.glb', 'box.obj', '')).toBe('models/box.obj')
    expect(outputPath('models/box.glb', 'box.zip', '')).toBe('models/box.zip')
    expect(outputPath('models/box.glb', 'box.obj', '.obj')).toBe('models/box.obj')
    expect(outputPath('models/box.glb', 'box.obj.zip', '.obj')).toBe('models/box.obj.zip')
    expect(outputPath('models/box.glb', 'box.gltf.zip', '.gltf')).toBe('models/box.gltf.zip')
    expect(outputPath('photo.png', 'photo.ktx2', '.ktx2')).toBe('photo.ktx2')
    expect(outputPath('box.glb', 'box.glb', '.ktx2')).toBe('box.ktx2.glb')
  })
  it('goes into --out when given, and never onto the input', () => {
    expect(outputPath('models/box.glb', 'box.glb', '.draco', { dir: 'out', stem: 'box' })).toBe('out/box.draco.glb')
    expect(outputPath('models/box.glb', 'box.glb', '')).toBe('models/box.out.glb')
    expect(outputPath('models/box.glb', undefined, '.repaired')).toBe('models/box.repaired.glb')
  })
})

describe('summaryLine', () => {
  it('sizes before → after, ratio, change and time', () => {
    expect(summaryLine('box.glb', 'box.draco.glb', 10_240, 4_096, 1_234)).toBe(
      'box.glb → box.draco.glb  10.0 KiB → 4.0 KiB  (ratio 0.40, −60.0 %)  1.2 s',
    )
    expect(summaryLine('a.obj', 'a.glb', 1_000, 1_500, 50)).toBe('a.obj → a.glb  1000 B → 1.5 KiB  (ratio 1.50, +50.0 %)  0.1 s')
    expect(summaryLine('a.glb', undefined, 2 * 1024 * 1024, undefined, 900)).toBe('a.glb  2.0 MiB  0.9 s')
  })
  it('formatBytes', () => {
    expect([0, 1023, 1024, 5 * 1024 ** 3].map(formatBytes)).toEqual(['0 B', '1023 B', '1.0 KiB', '5.0 GiB'])
  })
})
