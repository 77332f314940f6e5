import { basename, dirname, extname, join, resolve } from 'node:path'
import type { OutputPlace } from './output-plan.ts'

/**
 * Human size, in powers of 1024 with one decimal.
 * @example formatBytes(1536) // '1.5 KiB'
 */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB']
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`
}

/** Seconds with one decimal, e.g. `1.4 s`. */
function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`
}

/**
 * The one-line summary of a finished file.
 * @example summaryLine('box.glb', 'box.draco.glb', 10_000, 4_000, 1200) // 'box.glb → box.draco.glb  9.8 KiB → 3.9 KiB  (ratio 0.40, −60.0 %)  1.2 s'
 */
export function summaryLine(input: string, output: string | undefined, before: number, after: number | undefined, ms: number): string {
  const target = output ? ` → ${output}` : ''
  if (after === undefined) return `${input}${target}  ${formatBytes(before)}  ${formatSeconds(ms)}`
  const ratio = before > 0 ? after / before : 0
  const change = before > 0 ? (1 - ratio) * 100 : 0
  const sign = change >= 0 ? '−' : '+'
  return `${input}${target}  ${formatBytes(before)} → ${formatBytes(after)}  (ratio ${ratio.toFixed(2)}, ${sign}${Math.abs(change).toFixed(1)} %)  ${formatSeconds(ms)}`
}

/**
 * Where a result goes: in its place's folder (beside the input, or `--out`), named
 * `<stem><suffix><ext>` with the extension of the server's output file (see output-plan.ts for the
 * stem). Never the input itself.
 * @example outputPath('a/box.glb', 'box.glb', '.draco') // 'a/box.draco.glb'
 */
export function outputPath(input: string, serverFilename: string | undefined, suffix: string, place = defaultPlace(input)): string {
  const ext = (serverFilename && extname(serverFilename)) || extname(input)
  const tag = suffix && suffix.toLowerCase() !== ext.toLowerCase() ? suffix : ''
  const path = join(place.dir, `${place.stem}${tag}${ext}`)
  return resolve(path) === resolve(input) ? join(place.dir, `${place.stem}.out${ext}`) : path
}

function defaultPlace(input: string): OutputPlace {
  return { dir: dirname(input), stem: basename(input, extname(input)) }
}
