/** One task's line in the progress display. */
export interface ProgressLine {
  /** Status word and percentage while the task runs. */
  update(status: string, percent?: number): void
  /** Replaces the line with its final text. */
  finish(text: string, ok: boolean): void
}

/** Shows the progress of several tasks: redrawn bars on a terminal, plain lines elsewhere. */
export interface ProgressDisplay {
  add(label: string): ProgressLine
}

interface Writable {
  write(text: string): unknown
}

const BAR_WIDTH = 24

function bar(percent: number): string {
  const filled = Math.round((Math.max(0, Math.min(100, percent)) / 100) * BAR_WIDTH)
  return `[${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)}]`
}

/**
 * Bars on a terminal: the block of lines is redrawn in place (cursor up, clear line), so several
 * tasks show at once; a finished task's bar becomes its summary.
 */
export function createTerminalProgress(out: Writable): ProgressDisplay {
  const lines: string[] = []
  let drawn = 0
  function render() {
    let text = drawn > 0 ? `\x1b[${drawn}A` : ''
    // A finished summary may carry lines under it (the task's warnings and notes): each is a row to redraw.
    const rows = lines.flatMap((line) => line.split('\n'))
    for (const row of rows) text += `\r\x1b[2K${row}\n`
    drawn = rows.length
    out.write(text)
  }
  return {
    add(label) {
      const index = lines.push(`${label}  ${bar(0)}   0% uploading`) - 1
      render()
      return {
        update(status, percent = 0) {
          lines[index] = `${label}  ${bar(percent)} ${String(Math.round(percent)).padStart(3)}% ${status}`
          render()
        },
        finish(text, ok) {
          lines[index] = `${ok ? '✔' : '✖'} ${text}`
          render()
        },
      }
    },
  }
}

/** Plain lines for logs and pipes: one line per change of status or progress step (every 10 %). */
export function createPlainProgress(log: Writable, results: Writable): ProgressDisplay {
  return {
    add(label) {
      let last = ''
      return {
        update(status, percent) {
          const step = percent === undefined ? '' : ` ${Math.floor(percent / 10) * 10}%`
          const text = `${status}${step}`
          if (text === last) return
          last = text
          log.write(`${label}: ${text}\n`)
        },
        finish(text, ok) {
          ;(ok ? results : log).write(`${ok ? 'ok' : 'failed'}: ${text}\n`)
        },
      }
    },
  }
}

/** A display that shows nothing (`--json`). */
export function createSilentProgress(): ProgressDisplay {
  return { add: () => ({ update() {}, finish() {} }) }
}
