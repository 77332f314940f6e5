import type { CompletedTask, TextureReport } from '@mos/sdk/contract'
import { formatBytes } from '../api.ts'
import type { TaskRecord } from '../types.ts'

/** The reports the operations' steps add to a completed record, typed by the contract (task-reports.ts). */
type StepRecords = Pick<
  CompletedTask,
  | 'merge'
  | 'instance'
  | 'palette'
  | 'simplify'
  | 'textures_resized'
  | 'textures_repacked'
  | 'textures'
  | 'texture_bytes_before'
  | 'texture_bytes_after'
  | 'repairs'
> & {
  /** What the output-size rule did when the result came out larger than the input (docs/api.md, "Output size"). */
  size_rule?: { note?: string }
}

const count = (value: number) => value.toLocaleString('en-US')

/** `n things`, with the singular for one. */
const counted = (value: number, one: string, many: string) => `${count(value)} ${value === 1 ? one : many}`

/** `a → b` of two byte counts summed over a texture list. */
function bytesChange(list: { before: number; after: number }[]): string {
  const sum = (key: 'before' | 'after') => list.reduce((total, entry) => total + entry[key], 0)
  return `${formatBytes(sum('before'))} → ${formatBytes(sum('after'))}`
}

/** A texture's MIME type as people name the format: `image/webp` → WebP. */
function formatName(mime: string): string {
  const names: Record<string, string> = { 'image/png': 'PNG', 'image/jpeg': 'JPEG', 'image/webp': 'WebP', 'image/ktx2': 'KTX2' }
  return names[mime] ?? (mime || 'unknown format')
}

/**
 * One line per texture a texture operation handled: what it became, or that it was left as it was
 * and why. "original kept: … not smaller" matters most: without it a saving of a few percent (the
 * container re-written) reads as if the texture had been re-encoded.
 */
function textureLine(report: TextureReport, index: number): string {
  const name = report.name || `texture ${index + 1}`
  const why = [report.skipped, report.note].filter(Boolean).join('; ')
  if (report.skipped) return `Texture ${name}: left as it was (${why})`
  const mode = report.mode ? ` (${report.mode.toUpperCase()})` : ''
  const change =
    report.to === report.from
      ? `kept as ${formatName(report.from)}, ${formatBytes(report.before)} → ${formatBytes(report.after)}`
      : `${formatName(report.from)} → ${formatName(report.to)}${mode}, ${formatBytes(report.before)} → ${formatBytes(report.after)}`
  return `Texture ${name}: ${change}${why ? ` (${why})` : ''}`
}

/** repair's counts in words (`normals_recomputed: 4` → `4 normals recomputed`), the ones it found something for. */
function repairsLine(repairs: Record<string, number>): string {
  const done = Object.entries(repairs).filter(([, value]) => value > 0)
  if (done.length === 0) return 'Repaired: nothing, the model needed no repair'
  return `Repaired: ${done.map(([kind, value]) => `${count(value)} ${kind.replaceAll('_', ' ')}`).join(', ')}`
}

/**
 * One line per step the task ran, in the order they ran, from the figures on its record: what a
 * careful user checks first (did merge cut the draw calls, how far did simplify go, was a texture
 * re-encoded at all, what did repair fix). Empty for a task without step reports (the contract's own
 * fields alone, or diagnose).
 */
export function stepLines(task: TaskRecord): string[] {
  const steps = task as TaskRecord & StepRecords
  const lines: string[] = []
  const resized = steps.textures_resized?.filter((entry) => !entry.skipped) ?? []
  if (resized.length > 0) lines.push(`Textures resized: ${resized.length} (${bytesChange(resized)})`)
  const { palette, instance, merge, simplify } = steps
  if (palette) {
    const bytes = palette.textures.reduce((total, texture) => total + texture.bytes, 0)
    lines.push(
      `Palette: ${counted(palette.materials_before, 'material', 'materials')} → ${count(palette.materials_after)}, ${counted(palette.entries, 'colour', 'colours')} in ${counted(palette.textures.length, 'texture', 'textures')} (${formatBytes(bytes)})`,
    )
  }
  if (instance) {
    lines.push(
      `Instanced: ${counted(instance.instanced_meshes, 'mesh', 'meshes')} drawn as ${counted(instance.instances, 'GPU instance', 'GPU instances')}`,
    )
  }
  if (merge) {
    lines.push(
      `Merged: ${count(merge.draw_calls_before)} → ${count(merge.draw_calls_after)} draw calls, ${count(merge.nodes_before)} → ${count(merge.nodes_after)} nodes`,
    )
  }
  if (simplify) {
    const share = simplify.triangles_before > 0 ? (simplify.triangles_after / simplify.triangles_before) * 100 : 100
    const error = simplify.error === undefined ? '' : `, error ${(simplify.error * 100).toPrecision(2)}% of the extent`
    const skipped = simplify.skipped?.length ? `, ${counted(simplify.skipped.length, 'primitive', 'primitives')} skipped` : ''
    lines.push(
      `Simplified: ${count(simplify.triangles_before)} → ${count(simplify.triangles_after)} triangles (${share.toFixed(1)}%)${error}${skipped}`,
    )
  }
  const repacked = steps.textures_repacked ?? []
  if (repacked.length > 0) lines.push(`Textures re-coded losslessly: ${repacked.length} (${bytesChange(repacked)})`)
  // The texture operations (optimize, KTX2): each texture, then their totals.
  lines.push(...(steps.textures ?? []).map(textureLine))
  if (steps.texture_bytes_before !== undefined && steps.texture_bytes_after !== undefined) {
    lines.push(`Textures in all: ${formatBytes(steps.texture_bytes_before)} → ${formatBytes(steps.texture_bytes_after)}`)
  }
  if (steps.repairs) lines.push(repairsLine(steps.repairs))
  if (steps.size_rule?.note) lines.push(`Output size: ${steps.size_rule.note}`)
  return lines
}

/** The task's step reports, as a list under the outcome (nothing where the task ran no step). */
export function StepReports({ task }: { task: TaskRecord }) {
  const lines = stepLines(task)
  if (lines.length === 0) return null
  return (
    <ul class="steps" aria-label="What it did" data-testid="step-reports">
      {lines.map((line, index) => (
        // Two textures may be named alike: the position tells their lines apart.
        <li key={`${index}`}>{line}</li>
      ))}
    </ul>
  )
}
