import { describe, expect, it } from 'vitest'
import { droppedInput, savingPercent, sizeLine } from '../src/work/dropped-input.ts'

const file = (name: string, bytes: number) => new File([new Uint8Array(bytes)], name)

describe('what a card names and measures as its input', () => {
  it('is the file itself when it was sent as it is', () => {
    const input = droppedInput(file('box.glb', 4_700))
    expect(input).toEqual({ title: 'box.glb', bytes: 4_700 })
    expect(sizeLine(input, 3_200, 31.9)).toBe('4.6 KB → 3.1 KB (saving 31.9%)')
  })

  it('is the model and its files for a package: named after the model, measured by the files dropped, the zip named too', () => {
    const gltf = file('many-cubes.gltf', 540_000)
    const bin = file('many-cubes.bin', 1_000_000)
    const zip = file('many-cubes.zip', 83_558)
    const input = droppedInput(zip, {
      main: 'many-cubes.gltf',
      files: new Map([
        ['many-cubes.gltf', gltf],
        ['many-cubes.bin', bin],
      ]),
    })
    expect(input).toEqual({
      title: 'many-cubes.gltf + 1 file',
      bytes: 1_540_000,
      sent: { name: 'many-cubes.zip', bytes: 83_558, files: 2 },
    })
    expect(savingPercent(input.bytes, 98_509)).toBeCloseTo(93.6, 1)
    expect(sizeLine(input, 98_509, -17.9)).toBe(
      "1.47 MB dropped → 96.2 KB (saving 93.6% against the 2 files dropped; the task's record measures the zip sent, many-cubes.zip: 81.6 KB → 96.2 KB, saving -17.9%)",
    )
  })
})
