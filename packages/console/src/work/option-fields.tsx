import type { FieldInfo } from '../types.ts'
import { applies, type FieldValues, inForce, presetNote, shownValues, withChoice } from './form-values.ts'

/** A field's name with a line-break opportunity after each underscore: a long one wraps there, not mid-word. */
const breakableName = (name: string) =>
  name.split('_').map((part, index, parts) => (index < parts.length - 1 ? [part, '_', <wbr key={index} />] : part))

/** Every option of one operation, with its labels, ranges and descriptions; fields that do not apply are hidden. */
export function OptionFields({
  fields,
  chosen,
  idPrefix,
  onChange,
}: {
  fields: FieldInfo[]
  /** What the user set (`FieldValues`); the rest shows the preset's value or the default. */
  chosen: FieldValues
  idPrefix: string
  onChange: (chosen: FieldValues) => void
}) {
  const set = (name: string, value: string) => onChange(withChoice(fields, chosen, name, value))
  const values = shownValues(fields, chosen)
  const shown = fields.filter((field) => applies(field, values)).map((field) => inForce(field, values))
  if (shown.length === 0) return <p class="muted">This operation takes only the file.</p>
  return (
    <div class="fields">
      {shown.map((field) => {
        const id = `${idPrefix}-${field.name}`
        const note = presetNote(field, fields, chosen)
        const help = [field.description, field.extension ? 'Mos extension.' : ''].filter(Boolean).join(' ')
        const helpId = help ? `${id}-help` : undefined
        const noteId = note ? `${id}-preset` : undefined
        const describedBy = [noteId, helpId].filter(Boolean).join(' ') || undefined
        const value = values[field.name] ?? ''
        const hasDefault = field.default !== undefined && field.default !== null
        let control
        if (field.kind === 'boolean') {
          control = (
            <input
              id={id}
              type="checkbox"
              checked={value === 'true'}
              aria-describedby={describedBy}
              onChange={(event) => set(field.name, (event.target as HTMLInputElement).checked ? 'true' : 'false')}
            />
          )
        } else if (field.kind === 'enum' && field.choices) {
          control = (
            <select
              id={id}
              value={value}
              required={field.required}
              aria-describedby={describedBy}
              onChange={(event) => set(field.name, (event.target as HTMLSelectElement).value)}
            >
              {hasDefault ? null : (
                <option value="" disabled={field.required}>
                  {field.required ? 'Choose…' : '(service default)'}
                </option>
              )}
              {field.choices.map((choice) => (
                <option key={String(choice)} value={String(choice)}>
                  {String(choice)}
                </option>
              ))}
            </select>
          )
        } else {
          const numeric = field.kind === 'integer' || field.kind === 'number'
          control = (
            <input
              id={id}
              type={(numeric ? 'number' : 'text') as 'number'}
              inputMode={field.kind === 'integer' ? 'numeric' : numeric ? 'decimal' : undefined}
              min={numeric && field.min !== null && Number.isFinite(field.min) ? field.min : undefined}
              max={numeric && field.max !== null && Number.isFinite(field.max) ? field.max : undefined}
              step={field.kind === 'integer' ? 1 : numeric ? 'any' : undefined}
              required={field.required}
              value={value}
              aria-describedby={describedBy}
              onInput={(event) => set(field.name, (event.target as HTMLInputElement).value)}
            />
          )
        }
        return (
          <div class={`field field-${field.kind}`} key={field.name}>
            <label for={id}>
              {breakableName(field.name)}
              {field.required ? ' (required)' : ''}
            </label>
            {control}
            {note ? (
              <small id={noteId} class="preset-note" data-testid="preset-note">
                {note}
              </small>
            ) : null}
            {help ? (
              <small id={helpId} class="muted">
                {help}
              </small>
            ) : null}
          </div>
        )
      })}
    </div>
  )
}
