import type { FieldCondition, FieldInfo } from '../types.ts'

export type FieldValues = Record<string, string>

/** The form's starting values: each field's default, as the text a form holds. */
export function defaultValues(fields: FieldInfo[]): FieldValues {
  const values: FieldValues = {}
  for (const field of fields) values[field.name] = field.default === undefined || field.default === null ? '' : String(field.default)
  return values
}

const holds = (condition: FieldCondition, values: FieldValues) => values[condition.field] === String(condition.equals)

/** Whether a field applies given the others' values (`applies_when`, e.g. Draco-only bits). */
export function applies(field: FieldInfo, values: FieldValues): boolean {
  return !field.applies_when || holds(field.applies_when, values)
}

/** The field with the range in force now: an alternative's when its condition holds (png's quality). */
function inForce(field: FieldInfo, values: FieldValues): FieldInfo {
  const alternative = field.alternatives?.find((candidate) => holds(candidate.when, values))
  return alternative ? { ...field, min: alternative.min, max: alternative.max } : field
}

/** The fields to send: those that apply and hold a value (the service fills the defaults of the rest). */
export function formEntries(fields: FieldInfo[], values: FieldValues): [string, string][] {
  return fields
    .filter((field) => applies(field, values) && (values[field.name] ?? '') !== '')
    .map((field) => [field.name, values[field.name]!])
}

/** Every option of one operation, with its labels, ranges and descriptions; fields that do not apply are hidden. */
export function OptionFields({
  fields,
  values,
  idPrefix,
  onChange,
}: {
  fields: FieldInfo[]
  values: FieldValues
  idPrefix: string
  onChange: (values: FieldValues) => void
}) {
  const set = (name: string, value: string) => onChange({ ...values, [name]: value })
  const shown = fields.filter((field) => applies(field, values)).map((field) => inForce(field, values))
  if (shown.length === 0) return <p class="muted">This operation takes only the file.</p>
  return (
    <div class="fields">
      {shown.map((field) => {
        const id = `${idPrefix}-${field.name}`
        const help = [field.description, field.extension ? 'Mos extension.' : ''].filter(Boolean).join(' ')
        const helpId = help ? `${id}-help` : undefined
        const value = values[field.name] ?? ''
        const hasDefault = field.default !== undefined && field.default !== null
        let control
        if (field.kind === 'boolean') {
          control = (
            <input
              id={id}
              type="checkbox"
              checked={value === 'true'}
              aria-describedby={helpId}
              onChange={(event) => set(field.name, (event.target as HTMLInputElement).checked ? 'true' : 'false')}
            />
          )
        } else if (field.kind === 'enum' && field.choices) {
          control = (
            <select
              id={id}
              value={value}
              required={field.required}
              aria-describedby={helpId}
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
              aria-describedby={helpId}
              onInput={(event) => set(field.name, (event.target as HTMLInputElement).value)}
            />
          )
        }
        return (
          <div class={`field field-${field.kind}`} key={field.name}>
            <label for={id}>
              {field.name}
              {field.required ? ' (required)' : ''}
            </label>
            {control}
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
