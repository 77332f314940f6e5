import { keyLabel, localTime, shownValue } from './shown-value.ts'

/**
 * Any JSON document as nested definition lists: licence, limits, configuration, records. Each value
 * is shown under its key's conventions (shown-value.ts): a limit of -1 or null as `no limit`, sizes
 * and durations with their units, times in local time; `name` is the key the value sits under.
 */
export function KeyValues({ value, label, name }: { value: unknown; label?: string; name?: string }) {
  if (Array.isArray(value)) {
    if (value.length === 0) return <span class="muted">none</span>
    if (value.every((entry) => typeof entry !== 'object' || entry === null))
      return <span>{value.map((entry) => shownValue(name, entry)).join(', ')}</span>
    return (
      <ol class="kv-list">
        {value.map((entry, index) => (
          <li key={index}>
            <KeyValues value={entry} />
          </li>
        ))}
      </ol>
    )
  }
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
    if (entries.length === 0) return <span class="muted">empty</span>
    return (
      <dl class="kv" aria-label={label}>
        {entries.map(([key, entry]) => (
          <div class="kv-row" key={key}>
            <dt>{keyLabel(key)}</dt>
            <dd>
              <KeyValues value={entry} name={key} />
            </dd>
          </div>
        ))}
      </dl>
    )
  }
  const text = shownValue(name, value)
  if (text === '—') return <span class="muted">—</span>
  // A time keeps its exact instant for the reader who hovers it (and for a screen reader's `datetime`).
  if (localTime(value) !== undefined && text !== value)
    return (
      <time dateTime={String(value)} title={String(value)}>
        {text}
      </time>
    )
  return <span>{text}</span>
}
