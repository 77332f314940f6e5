/** Any JSON document as nested definition lists: licence, limits, configuration, records. */
export function KeyValues({ value, label }: { value: unknown; label?: string }) {
  if (value === null || value === undefined) return <span class="muted">—</span>
  if (Array.isArray(value)) {
    if (value.length === 0) return <span class="muted">none</span>
    if (value.every((entry) => typeof entry !== 'object' || entry === null)) return <span>{value.join(', ')}</span>
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
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
    if (entries.length === 0) return <span class="muted">empty</span>
    return (
      <dl class="kv" aria-label={label}>
        {entries.map(([key, entry]) => (
          <div class="kv-row" key={key}>
            <dt>{key.replaceAll('_', ' ')}</dt>
            <dd>
              <KeyValues value={entry} />
            </dd>
          </div>
        ))}
      </dl>
    )
  }
  return <span>{String(value)}</span>
}
