import type { CompletedTask } from '@mos/sdk/contract'
import { formatBytes } from '../api.ts'
import type { TaskRecord } from '../types.ts'

/** The reports compress's and convert's steps add to a completed record, typed by the contract (task-reports.ts). */
type StepRecords = Pick<CompletedTask, 'merge' | 'instance' | 'palette' | 'simplify' | 'textures_resized' | 'textures_repacked'>

const count = (value: number) => value.toLocaleString('en-US')

/** `n things`, with the singular for one. */
const counted = (value: number, one: string, many: string) => `${count(value)} ${value === 1 ? one : many}`

/** `a → b` of two byte counts summed over a texture list. */
function bytesChange(list: { before: number; after: number }[]): string {
  const sum = (key: 'before' | 'after') => list.reduce((total, entry) => total + entry[key], 0)
  return `${formatBytes(sum('before'))} → ${formatBytes(sum('after'))}`
}

/**
 * One line per step the task ran, in the order they ran, from the figures on its record: what a
 * careful user checks first (did merge cut the draw calls, how far did simplify go). Empty for a task
 * without step reports (the contract's own fields alone, or another operation).
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
  return lines
}

/** The task's step reports, as a list under the outcome (nothing where the task ran no step). */
export function StepReports({ task }: { task: TaskRecord }) {
  const lines = stepLines(task)
  if (lines.length === 0) return null
  return (
    <ul class="steps" aria-label="What it did" data-testid="step-reports">
      {lines.map((line) => (
        <li key={line}>{line}</li>
      ))}
    </ul>
  )
}
