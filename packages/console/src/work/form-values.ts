import type { FieldCondition, FieldInfo } from '../types.ts'

/**
 * What the user set in a form, field by field, as the text a form control holds. A field missing here
 * was left alone: it shows the preset's value or the default, and is not sent, so the service applies
 * them itself. Sending every default as if it were chosen overrode the presets (docs/api.md: a field
 * the request gives wins over its preset), so `preset=mobile` merged nothing from the console.
 */
export type FieldValues = Record<string, string>

const text = (value: string | number | boolean | null | undefined) => (value === undefined || value === null ? '' : String(value))

/** The field whose choices are bundles of other fields (compress's `preset`), and the bundle chosen, if any. */
export function presetInForce(fields: FieldInfo[], chosen: FieldValues): { name: string; sets: FieldValues } | undefined {
  const field = fields.find((candidate) => candidate.presets)
  const name = field ? chosen[field.name] : undefined
  const sets = name ? field?.presets?.[name] : undefined
  if (!name || !sets) return undefined
  return { name, sets: Object.fromEntries(Object.entries(sets).map(([key, value]) => [key, String(value)])) }
}

/** Each field's value as shown and as the service will apply it: the user's, else the preset's, else the default in force. */
export function shownValues(fields: FieldInfo[], chosen: FieldValues): FieldValues {
  const preset = presetInForce(fields, chosen)?.sets ?? {}
  const base: FieldValues = {}
  for (const field of fields) base[field.name] = chosen[field.name] ?? preset[field.name] ?? text(field.default)
  // A default that depends on another field's value (png's quality) is read once those values are known.
  for (const field of fields) {
    if (chosen[field.name] === undefined && preset[field.name] === undefined) base[field.name] = text(inForce(field, base).default)
  }
  return base
}

/**
 * What a preset does to a field, in words: that the value shown is the preset's, that the user's own value
 * wins over a different one the preset sets, or that a field emptied by hand still gets the preset's (an
 * empty field is not sent). Nothing where no preset touches the field.
 */
export function presetNote(field: FieldInfo, fields: FieldInfo[], chosen: FieldValues): string {
  const preset = presetInForce(fields, chosen)
  const theirs = preset?.sets[field.name]
  const own = chosen[field.name]
  if (!preset || theirs === undefined || own === theirs) return ''
  if (own === undefined) return `Set by preset ${preset.name}.`
  if (own === '') return `Left empty: preset ${preset.name}'s ${theirs} applies.`
  return `Your value is sent and wins over preset ${preset.name}'s ${theirs}.`
}

/** Whether a condition holds for the form's values: the other field has (one of) the value(s), or is empty where that is allowed. */
function holds(condition: FieldCondition, values: FieldValues): boolean {
  const value = values[condition.field] ?? ''
  if (value === '') return condition.orAbsent === true
  return typeof condition.equals === 'string' ? value === condition.equals : condition.equals.includes(value)
}

/** Whether a field applies given the others' values (`applies_when`, e.g. Draco-only bits). */
export function applies(field: FieldInfo, values: FieldValues): boolean {
  return !field.applies_when || holds(field.applies_when, values)
}

/** The field with the range and default in force now: an alternative's when its condition holds (png's quality). */
export function inForce(field: FieldInfo, values: FieldValues): FieldInfo {
  const alternative = field.alternatives?.find((candidate) => holds(candidate.when, values))
  return alternative ? { ...field, min: alternative.min, max: alternative.max, default: alternative.default } : field
}

/** Whether a number typed into a numeric field lies outside its range (text that is no number yet is the browser's to refuse). */
function outOfRange(field: FieldInfo, value: string): boolean {
  if ((field.kind !== 'integer' && field.kind !== 'number') || value.trim() === '') return false
  const number = Number(value)
  if (!Number.isFinite(number)) return false
  const { min, max } = field
  if (min !== undefined && min !== null && (number < min || (field.min_exclusive && number === min))) return true
  return max !== undefined && max !== null && number > max
}

/**
 * The user's values after they set `name` to `value`. Choosing a preset applies it: the fields it sets
 * drop what the user had put in them and show the preset's values (a later change to one of them is
 * sent and wins, as in the API). A value another field set earlier that the new range no longer allows
 * (quality 82 once png is chosen, whose range is 1–9) is dropped, so that field takes the new range's
 * default rather than leaving a form Start cannot send.
 */
export function withChoice(fields: FieldInfo[], chosen: FieldValues, name: string, value: string): FieldValues {
  const next: FieldValues = { ...chosen, [name]: value }
  if (fields.find((field) => field.name === name)?.presets) {
    for (const key of Object.keys(presetInForce(fields, next)?.sets ?? {})) delete next[key]
  }
  const shown = shownValues(fields, next)
  for (const field of fields) {
    const own = next[field.name]
    if (field.name !== name && own !== undefined && outOfRange(inForce(field, shown), own)) delete next[field.name]
  }
  return next
}

/**
 * The fields to send: those that apply and that the user set (or that are required), never a default
 * the user left alone, so the service's defaults and presets apply exactly as through the API.
 */
export function formEntries(fields: FieldInfo[], chosen: FieldValues): [string, string][] {
  const shown = shownValues(fields, chosen)
  return fields
    .filter((field) => applies(field, shown) && (chosen[field.name] !== undefined || field.required))
    .map((field): [string, string] => [field.name, shown[field.name] ?? ''])
    .filter(([, value]) => value !== '')
}

/**
 * The values of the form switched to (a single task's, or a batch's) with what the user set in the one left, for the
 * fields both forms have: an engine chosen for one file stays chosen when the files go as one batch, where the batch
 * form came up with its engine empty ("Choose…") and Start then stopped at the browser's bubble. What was already set
 * in the form switched to stays.
 */
export function carriedOver(fields: FieldInfo[], from: FieldValues, into: FieldValues): FieldValues {
  const carried: FieldValues = {}
  for (const field of fields) {
    const value = from[field.name]
    if (value !== undefined) carried[field.name] = value
  }
  return { ...carried, ...into }
}
