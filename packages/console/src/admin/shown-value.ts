import { formatBytes } from '../api.ts'

/**
 * How the Admin page shows one entry of a service document (licence, limits, a task record, a batch):
 * the service's documents carry their units and sentinels in their keys and values (`max_batch_count:
 * -1` in the tier table, `null` in the limits in force, `input_size_bytes: 180177`, ISO times), which
 * the page printed as they came: a limit without one read `-1` or `—`, a size `180177`.
 */

/** The words the console uses for a limit that does not limit (the tier's -1, the `null` of the limits in force). */
export const NO_LIMIT = 'no limit'

/** A unit a key ends with, the words it is shown with, and how its value reads. */
const UNITS: { suffix: string; show: (value: number) => string }[] = [
  { suffix: '_mb', show: (value) => `${value.toLocaleString('en')} MB` },
  { suffix: '_bytes', show: (value) => formatBytes(value) },
  { suffix: '_ms', show: (value) => `${value.toLocaleString('en')} ms` },
  { suffix: '_percent', show: (value) => `${value}%` },
]

/** A document's own key (lower snake case); a setting's name (`SERVICE__LIMITS__…`) is shown as it is written. */
const isDocumentKey = (key: string) => /^[a-z][a-z0-9_]*$/.test(key)

/** A limit's key: `-1` or `null` under it means the deployment sets none. */
const isLimit = (key: string) => key.startsWith('max_')

/** The key in words, without the unit its value now carries: `max_file_size_mb` → `max file size`. */
export function keyLabel(key: string): string {
  if (!isDocumentKey(key)) return key
  const unit = UNITS.find(({ suffix }) => key.endsWith(suffix) && key !== suffix.slice(1))
  return (unit ? key.slice(0, -unit.suffix.length) : key).replaceAll('_', ' ')
}

/** An ISO time as the rest of the console shows times (the task list's local date and time), else undefined. */
export function localTime(value: unknown): string | undefined {
  if (typeof value !== 'string' || !/^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(value)) return undefined
  const time = new Date(value)
  return Number.isNaN(time.getTime()) ? undefined : time.toLocaleString()
}

/** A scalar value (or null) under `key` in words: `no limit`, `500 MB`, `176.0 KB`, a local time, `—` for nothing. */
export function shownValue(key: string | undefined, value: unknown): string {
  const name = key && isDocumentKey(key) ? key : ''
  if (name && isLimit(name) && (value === null || value === -1)) return NO_LIMIT
  if (value === null || value === undefined || value === '') return '—'
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return '—'
    if (name === 'progress') return `${value}%`
    const unit = UNITS.find(({ suffix }) => name.endsWith(suffix))
    return unit ? unit.show(value) : String(value)
  }
  if (name.endsWith('_at')) return localTime(value) ?? String(value)
  return String(value)
}
