import { describe, expect, it } from 'vitest'
import { createPlainProgress, createTerminalProgress } from '../../src/cli/progress.ts'

/** Replays what a terminal would show for the written text (cursor up, clear line, newline). */
function screen(text: string): string[] {
  const lines: string[] = []
  let row = 0
  for (const token of text.split(/(\x1b\[\d+A|\r\x1b\[2K|\n)/)) {
    const up = /^\x1b\[(\d+)A$/.exec(token)
    if (up) row -= Number(up[1])
    else if (token === '\r\x1b[2K') lines[row] = ''
    else if (token === '\n') row++
    else if (token) lines[row] = (lines[row] ?? '') + token
  }
  return lines
}

describe('terminal progress', () => {
  it('redraws one bar per task in place; finished tasks become their summary', () => {
    let written = ''
    const display = createTerminalProgress({ write: (text: string) => (written += text) })
    const a = display.add('a.glb')
    const b = display.add('b.glb')
    a.update('processing', 50)
    b.update('pending', 0)
    expect(screen(written)).toEqual(['a.glb  [████████████░░░░░░░░░░░░]  50% processing', 'b.glb  [░░░░░░░░░░░░░░░░░░░░░░░░]   0% pending'])
    a.finish('a.glb → a.draco.glb  1.0 KiB → 0.5 KiB', true)
    b.finish('b.glb: unsupported format: txt', false)
    expect(screen(written)).toEqual(['✔ a.glb → a.draco.glb  1.0 KiB → 0.5 KiB', '✖ b.glb: unsupported format: txt'])
  })
})

describe('terminal progress with lines under a summary', () => {
  it('keeps the bars below in place when a finished task says more under its summary', () => {
    let written = ''
    const display = createTerminalProgress({ write: (text: string) => (written += text) })
    const a = display.add('a.fbx')
    const b = display.add('b.glb')
    a.finish('a.fbx → a.glb  1.0 KiB → 0.9 KiB\n  warning: [fbx] texture "wood.png" is not in the upload; dropped', true)
    b.update('processing', 50)
    b.update('processing', 100)
    expect(screen(written)).toEqual([
      '✔ a.fbx → a.glb  1.0 KiB → 0.9 KiB',
      '  warning: [fbx] texture "wood.png" is not in the upload; dropped',
      'b.glb  [████████████████████████] 100% processing',
    ])
  })
})

describe('plain progress', () => {
  it('one line per status or 10 % step to the log; results to their own stream', () => {
    let log = ''
    let results = ''
    const line = createPlainProgress({ write: (t: string) => (log += t) }, { write: (t: string) => (results += t) }).add('a.glb')
    for (const [status, percent] of [
      ['pending', 0],
      ['processing', 3],
      ['processing', 7],
      ['processing', 42],
      ['completed', 100],
    ] as const)
      line.update(status, percent)
    line.finish('a.glb → a.draco.glb', true)
    expect(log).toBe('a.glb: pending 0%\na.glb: processing 0%\na.glb: processing 40%\na.glb: completed 100%\n')
    expect(results).toBe('ok: a.glb → a.draco.glb\n')
  })
})
