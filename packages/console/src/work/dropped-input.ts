import { formatBytes } from '../api.ts'
import type { ModelPackage } from '../viewer/model-package.ts'

/**
 * What the user gave, as a card names and measures it. A model dropped with its companion files is
 * sent as a zip the page makes (model-package.ts), and the task's record measures that zip, as it
 * should for the API: its `input_size_bytes` and `savings_percent` are the upload's. But the zip is
 * deflated (level 6), so measured against it a result could read "saving -17.9%" where the files
 * dropped shrank by 93%: the card names the model dropped and states the saving against the dropped
 * files' total, and keeps the record's own figures beside it, named as the zip's.
 */
export interface DroppedInput {
  /** The model file and how many files came with it: `many-cubes.gltf + 1 file`. */
  title: string
  /** The bytes the user dropped: the file, or the package's files summed. */
  bytes: number
  /** The zip the page sent for a package (the record's input) and how many files it holds; absent for a file sent as it is. */
  sent?: { name: string; bytes: number; files: number }
}

export function droppedInput(file: File, pack?: ModelPackage): DroppedInput {
  if (!pack) return { title: file.name, bytes: file.size }
  const others = pack.files.size - 1
  const bytes = [...pack.files.values()].reduce((total, blob) => total + blob.size, 0)
  const name = pack.main.replace(/^.*\//, '')
  return {
    title: `${name} + ${others} ${others === 1 ? 'file' : 'files'}`,
    bytes,
    sent: { name: file.name, bytes: file.size, files: pack.files.size },
  }
}

/** The saving of `output` bytes against `input` bytes, in percent (negative: larger), as the API computes it. */
export function savingPercent(input: number, output: number): number {
  return input > 0 ? (1 - output / input) * 100 : 0
}

/**
 * The outcome line's sizes: `4.6 KB → 3.1 KB (saving 32.6%)` for a file sent as it is; for a
 * package, the dropped files against the result, then the record's figures for the zip sent.
 */
export function sizeLine(input: DroppedInput, output: number, recordSaving: number | undefined): string {
  const record = recordSaving !== undefined ? ` (saving ${recordSaving.toFixed(1)}%)` : ''
  if (!input.sent) return `${formatBytes(input.bytes)} → ${formatBytes(output)}${record}`
  return (
    `${formatBytes(input.bytes)} dropped → ${formatBytes(output)} (saving ${savingPercent(input.bytes, output).toFixed(1)}% against ` +
    `the ${input.sent.files} files dropped; the task's record measures the zip sent, ${input.sent.name}: ` +
    `${formatBytes(input.sent.bytes)} → ${formatBytes(output)}${recordSaving !== undefined ? `, saving ${recordSaving.toFixed(1)}%` : ''})`
  )
}

/**
 * The outcome line of a diagnosis: its report's size alone. Put as the other operations' `input → output`, it read
 * `189.9 KB → 1.2 KB` as if the model had shrunk by 99%, where the model is left as it was and the output is a report.
 */
export function reportLine(reportBytes: number): string {
  return `Report: ${formatBytes(reportBytes)} (a diagnosis reads the model and leaves it as it was)`
}
