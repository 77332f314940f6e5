import { z } from 'zod'

/** What a setting says of itself besides its value: for docs/configuration.md, .env.example and masked views. */
export interface SettingInfo {
  doc: string
  /** A credential: never shown, only whether it is set. */
  secret?: boolean
}

/** Everything a setting declares, read back from its schema's metadata. */
export interface SettingMeta extends SettingInfo {
  kind: 'integer' | 'number' | 'string' | 'choice' | 'list' | 'boolean'
  default: unknown
  min?: number
  max?: number
  values?: readonly string[]
}

/** A setting: a zod schema from its variable's text (absent: the default) to its typed value. */
export type Setting<T> = z.ZodType<T, string | undefined>

/** What a reader found in a variable's text: the value, or what was expected instead. */
type Reading<T> = { value: T } | { expected: string }

/**
 * One setting. Its text is trimmed before `read`; the issue it raises names what was expected and
 * the text as the operator wrote it, which is what a start-up error must show.
 */
function setting<T>(meta: SettingMeta & { default: T }, read: (text: string) => Reading<T>): Setting<T> {
  return z
    .string()
    .optional()
    .transform((raw, context): T => {
      if (raw === undefined) return structuredClone(meta.default)
      const reading = read(raw.trim())
      if ('value' in reading) return reading.value
      context.addIssue({
        code: 'custom',
        message: reading.expected === '' ? 'must not be empty' : `expected ${reading.expected}, got "${raw}"`,
      })
      return z.NEVER
    })
    .meta({ ...meta }) as unknown as Setting<T>
}

interface Range {
  default: number
  min: number
  max: number
}

const inRange = (n: number, { min, max }: Range) => n >= min && n <= max

/** An integer variable within [min, max]. */
export const integer = (options: SettingInfo & Range) =>
  setting<number>({ kind: 'integer', ...options }, (text) =>
    /^[+-]?\d+$/.test(text) && inRange(Number(text), options)
      ? { value: Number(text) }
      : { expected: `an integer from ${options.min} to ${options.max}` },
  )

/** A decimal variable within [min, max]. */
export const number = (options: SettingInfo & Range) =>
  setting<number>({ kind: 'number', ...options }, (text) =>
    /^[+-]?(\d+\.?\d*|\.\d+)$/.test(text) && inRange(Number(text), options)
      ? { value: Number(text) }
      : { expected: `a number from ${options.min} to ${options.max}` },
  )

/** A non-empty text (an empty default means "not set"). */
export const string = (options: SettingInfo & { default: string }) =>
  setting<string>({ kind: 'string', ...options }, (text) => (text === '' ? { expected: '' } : { value: text }))

/** One of `values`, matched without regard to case and returned as declared. */
export const choice = <const V extends string>(options: SettingInfo & { values: readonly V[]; default: NoInfer<V> }) =>
  setting<V>({ kind: 'choice', ...options }, (text) => {
    const match = options.values.find((v) => v.toLowerCase() === text.toLowerCase())
    return match ? { value: match } : { expected: `one of ${options.values.join(', ')}` }
  })

/** A comma-separated list; blanks between commas are dropped. */
export const list = (options: SettingInfo & { default: readonly string[] }) =>
  setting<string[]>({ kind: 'list', ...options, default: [...options.default] }, (text) => ({
    value: text
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  }))

/**
 * The words an on/off setting takes, in any case: every boolean setting reads them, and the docs'
 * "Accepts" column and .env.example are generated from them, so neither can promise fewer or more
 * than the parser takes (they said `true | false` while `yes` was taken).
 */
export const BOOLEAN_WORDS = { true: ['true', '1', 'yes', 'on'], false: ['false', '0', 'no', 'off'] } as const

/** How the accepted words are written in the docs and in a refusal. */
export const BOOLEAN_RULE = `${BOOLEAN_WORDS.true.join(' | ')} or ${BOOLEAN_WORDS.false.join(' | ')}`

export const boolean = (options: SettingInfo & { default: boolean }) =>
  setting<boolean>({ kind: 'boolean', ...options }, (text) => {
    const word = text.toLowerCase()
    if ((BOOLEAN_WORDS.true as readonly string[]).includes(word)) return { value: true }
    if ((BOOLEAN_WORDS.false as readonly string[]).includes(word)) return { value: false }
    return { expected: BOOLEAN_RULE }
  })

/** A setting's declaration, read from its schema. */
export function settingMeta(schema: Setting<unknown>): SettingMeta {
  return schema.meta() as unknown as SettingMeta
}
